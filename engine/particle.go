package engine

import (
	"math/rand/v2"

	"github.com/mtsgd/mtsgd/models"
)

// Particle is one network of an ensemble: its parameters and running
// statistics as flat vectors. Particles hold no graphs: a machine (one per
// worker) copies a particle's vectors into its graphs for each run.
type Particle struct {
	// Trunk is α, the trunk's parameters as one flat vector.
	Trunk []float64
	// Heads[j] is βʲ, task j's head parameters as one flat vector.
	Heads [][]float64
	// Stats are the running statistics of the trunk's batch
	// normalisation (models.Model.TrunkStats), empty without any.
	Stats []float64
}

// NewParticle draws a particle's parameters from rng by the model's
// initialisation.
func NewParticle(cfg *Config, rng *rand.Rand) (*Particle, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	m := cfg.Model
	p := &Particle{}
	trunkParams := m.TrunkParams()
	p.Trunk = make([]float64, models.Size(trunkParams))
	models.Init(trunkParams, rng, p.Trunk)
	for j := range cfg.Tasks {
		hp := m.HeadParams(j)
		h := make([]float64, models.Size(hp))
		models.Init(hp, rng, h)
		p.Heads = append(p.Heads, h)
	}
	stats := m.TrunkStats()
	p.Stats = make([]float64, models.Size(stats))
	models.Init(stats, rng, p.Stats)
	return p, nil
}
