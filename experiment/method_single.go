package experiment

// singleMethod trains every task on its own: no shared trunk.
var singleMethod = Method{
	Name:     "single",
	Title:    "single-task",
	Help:     "no shared trunk: one whole network per task and particle, each following its own task's score",
	Heads:    ownScore,
	Compared: true,
}
