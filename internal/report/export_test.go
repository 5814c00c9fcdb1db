package report

// KeepJobs is keepJobs, for the tests of package report_test.
const KeepJobs = keepJobs
