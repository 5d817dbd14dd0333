package workflows

// QueryStatus is the query every long-running flow answers with its
// status (the draft order's and the onboarding's).
const QueryStatus = "status"
