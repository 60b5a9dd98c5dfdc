package main_test

// schedulingWant holds what the scenarios must produce for pending-taints, node-pod-capacity
// (see scenarioWant). Findings of a check are listed in report order:
// severity (critical first), then namespace, then name.
var schedulingWant = map[string][]wantFinding{}
