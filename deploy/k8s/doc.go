// Package k8s holds Kubernetes manifests that run lockbench across
// machines: an Indexed Job of N pods, one execution segment each
// (--segment-count N with the pod's JOB_COMPLETION_INDEX), against a Redis
// the user names, a merge Job, the results volume, a Secret template and
// the kustomization that sets N, the image and the target in one place.
// The Go code here is only the test that decodes every manifest strictly
// with the Kubernetes API types and checks the lockbench command lines
// with lockbench's own flag validation; see README.md in this folder.
package k8s
