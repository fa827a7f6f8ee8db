//go:build race

package dataset_test

// raceBuild is whether the tests run with the race detector, which turns on checkptr.
const raceBuild = true
