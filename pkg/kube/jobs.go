package kube

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// JobFinished says the Job has ended: its Complete or Failed condition is True.
func JobFinished(j *batchv1.Job) bool {
	return JobCondition(j, batchv1.JobComplete) != nil || JobCondition(j, batchv1.JobFailed) != nil
}

// JobCondition returns the Job's condition of that type when it is True, else nil.
func JobCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if c := &j.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// PodTerminal says the pod has Succeeded or Failed: it holds no resources.
func PodTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}
