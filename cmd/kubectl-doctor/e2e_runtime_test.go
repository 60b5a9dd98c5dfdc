package main_test

// runtimeWant holds what the scenarios must produce for sandbox-failures, runtime-socket
// (see scenarioWant). Findings of a check are listed in report order:
// severity (critical first), then namespace, then name.
var runtimeWant = map[string][]wantFinding{}
