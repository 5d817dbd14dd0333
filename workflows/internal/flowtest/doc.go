// Package flowtest is the test environment the flows' unit tests share: a
// workflow test environment whose tool activity answers with fakes, and
// the support-staff roster and seals of the test ring.
package flowtest
