package main_test

// nodeHealthWant holds what the scenarios must produce for node-health, node-drift
// (see scenarioWant). Findings of a check are listed in report order:
// severity (critical first), then namespace, then name.
var nodeHealthWant = map[string][]wantFinding{}
