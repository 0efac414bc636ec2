"""The workload layer on any cluster: Kueue, JobSet, Kubeflow trainer, Volcano, KEDA, priorities, team namespaces."""
