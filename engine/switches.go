package engine

// The switches below choose between two ways of running a step, the
// faster one on; tests turn a switch off to compare the two (the tests
// named beside each). models/ops and internal/asm have switches of their
// own, for the ops' and the assembly's paths.
var (
	// keepTrunkPasses lets heads-first steps keep the trunks' forward
	// passes (keepTrunks; TestKeptTrunksChangeNothing).
	keepTrunkPasses = true

	// shareIdle makes a worker whose particles are done help the others
	// (onWorkers; TestHelpingChangesNothing).
	shareIdle = true

	// stackFilterGrads makes machine.gradients stack the trunk passes'
	// filter gradients (ops.Recording.StackFilterGrads;
	// TestStackedFilterGradsChangeNothing).
	stackFilterGrads = true

	// stackAcrossParticles makes a step stack the passes of the particles
	// a worker runs on one batch where they share the patches
	// (ops.StackAcross; TestStackAcrossParticlesChangesNothing).
	stackAcrossParticles = true
)
