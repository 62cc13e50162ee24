// Package models is the parent of one package per network architecture,
// each read as name.New (models/lenet, models/resnet18, models/mlp). A model
// builds a shared trunk α and one head βʲ per task into a Gorgonia graph and
// says which parameters belong to the trunk and which to task j, so that the
// rules of package particles can update them as flat vectors. The first
// model, LeNet, arrives with network training (issue 4).
package models
