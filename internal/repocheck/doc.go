// Package repocheck holds tests that read the repository itself rather
// than run its code: rules a reviewer would otherwise have to keep in mind
// on every change, checked by every go test.
//
//   - TestNamedGoFilesExist: every .go file a comment or a Markdown page
//     names exists somewhere in the repository, so that a comment sending
//     the reader to a file is not left pointing at one that was split or
//     renamed.
//   - TestLayers: the top-level folders depend on each other downwards, in
//     the order of docs/layout.md (internal; checkpoints, metrics and optim;
//     particles; data; models; engine; experiment; cmd and examples). The
//     few edges against that order are printed and capped, so that a new one
//     is a decision, not an accident.
//   - TestFileSizes, TestFunctionSizes, TestDocSizes: hand-written Go files
//     stay within 800 lines and their functions within 80, docs pages within
//     600 lines and README.md within 150: long ones are where a newcomer
//     stops reading.
//
// The tests find the repository's root by walking up from their directory
// to go.mod, and read files only: they need no network, no build and no
// go command.
package repocheck
