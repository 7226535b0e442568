package clusterlab

import "time"

// CrashLoopOOM is checkout's one ReplicaSet, rolled out nine days before now,
// its pods killed by the OOM killer again and again since a few minutes ago:
// the reason is only in the pods' last termination (OOMKilled, exit 137).
func CrashLoopOOM(namespace, token string, now time.Time) Cluster {
	rs := "checkout-7d9f8c6b5"
	oom := func(name string, restarts int, ago time.Duration) Pod {
		return Pod{Name: name, ReplicaSet: rs, Container: "checkout", Phase: "Running", Restarts: restarts, Waiting: "CrashLoopBackOff",
			LastReason: "OOMKilled", LastExit: 137, LastFinished: now.Add(-ago), Started: now.Add(-9 * 24 * time.Hour)}
	}
	return Cluster{Namespace: namespace, Token: token, Deployments: []string{"checkout"},
		ReplicaSets: []ReplicaSet{{Name: rs, Deployment: "checkout", Image: "registry.example/checkout:2.14.0", Revision: 12, Created: now.Add(-9 * 24 * time.Hour), Replicas: 2, Ready: 0}},
		Pods:        []Pod{oom(rs+"-x2k4q", 6, 2*time.Minute), oom(rs+"-p9m3z", 5, 3*time.Minute)},
		Events: []Event{{Kind: "Pod", Name: rs + "-x2k4q", Type: "Warning", Reason: "BackOff", Message: "Back-off restarting failed container checkout in pod " + rs + "-x2k4q_" + namespace,
			Count: 14, First: now.Add(-9 * time.Minute), Last: now.Add(-time.Minute)}},
	}
}

// BadRollout is checkout rolled out to revision 13 six minutes before now:
// the new ReplicaSet's pods crash (exit 1) while revision 12's keep serving.
func BadRollout(namespace, token string, now time.Time) Cluster {
	oldRS, newRS := "checkout-7d9f8c6b5", "checkout-5c8b7f9d4"
	crash := func(name string, ago time.Duration) Pod {
		return Pod{Name: name, ReplicaSet: newRS, Container: "checkout", Phase: "Running", Restarts: 4, Waiting: "CrashLoopBackOff",
			LastReason: "Error", LastExit: 1, LastFinished: now.Add(-ago), Started: now.Add(-6 * time.Minute)}
	}
	healthy := func(name string) Pod {
		return Pod{Name: name, ReplicaSet: oldRS, Container: "checkout", Phase: "Running", Ready: true, Started: now.Add(-9 * 24 * time.Hour)}
	}
	return Cluster{Namespace: namespace, Token: token, Deployments: []string{"checkout"},
		ReplicaSets: []ReplicaSet{
			{Name: oldRS, Deployment: "checkout", Image: "registry.example/checkout:2.14.0", Revision: 12, Created: now.Add(-9 * 24 * time.Hour), Replicas: 2, Ready: 2},
			{Name: newRS, Deployment: "checkout", Image: "registry.example/checkout:2.15.0", Revision: 13, Created: now.Add(-6 * time.Minute), Replicas: 1, Ready: 0},
		},
		Pods: []Pod{crash(newRS+"-h7r2k", time.Minute), healthy(oldRS + "-x2k4q"), healthy(oldRS + "-p9m3z")},
		Events: []Event{
			{Kind: "Deployment", Name: "checkout", Type: "Normal", Reason: "ScalingReplicaSet", Message: "Scaled up replica set " + newRS + " to 1", Count: 1, First: now.Add(-6 * time.Minute), Last: now.Add(-6 * time.Minute)},
			{Kind: "Pod", Name: newRS + "-h7r2k", Type: "Warning", Reason: "BackOff", Message: "Back-off restarting failed container checkout in pod " + newRS + "-h7r2k_" + namespace, Count: 9, First: now.Add(-5 * time.Minute), Last: now.Add(-time.Minute)},
		},
	}
}
