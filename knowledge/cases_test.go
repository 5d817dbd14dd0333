package knowledge

// groundedCases are claims and questions the corpus answers, with the
// section that must come first. They mix agent-style claims, merchant
// questions, and raw requirement keys as Stripe lists them.
// also lists other sections that answer the claim just as well; the test
// accepts them first too.
var groundedCases = []struct {
	claim string
	want  string
	also  []string
}{
	{"Stripe needs a photo of your passport or driver's license to verify your identity", "individual-verification-document", nil},
	{"individual.verification.document is currently due", "individual-verification-document", nil},
	{"person_1AbCdEf.verification.document", "individual-verification-document", nil},
	{"Stripe asked me for a proof of address such as a utility bill", "individual-verification-additional-document", nil},
	{"individual.verification.additional_document", "individual-verification-additional-document", nil},
	{"We need the last 4 digits of your social security number", "individual-ssn-last-4", nil},
	{"Why does Stripe want my full SSN?", "individual-id-number", nil},
	{"individual.dob.day is required", "individual-dob", nil},
	{"representative.address.city", "individual-address", nil},
	{"Is a P.O. box accepted as my home address?", "individual-address", nil},
	{"How do I add a bank account to receive payouts?", "external-account", nil},
	{"external_account is currently due", "external-account", nil},
	{"Why are payouts disabled but charges enabled?", "charges-payouts-enabled", nil},
	{"The onboarding link expired, what do I do?", "account-links", nil},
	{"refresh_url of an account link", "account-links", nil},
	{"requirements.disabled_reason is rejected.fraud", "disabled-rejected", nil},
	{"My account was rejected for suspected fraud", "disabled-rejected", nil},
	{"The platform paused my account", "disabled-platform-paused", nil},
	{"disabled_reason requirements.past_due: the deadline passed", "disabled-requirements-past-due", nil},
	{"Stripe is still verifying the information I submitted", "disabled-pending-verification", nil},
	{"disabled_reason listed: possible match on a sanctions list", "disabled-listed", nil},
	{"account is under_review by Stripe", "disabled-under-review", nil},
	{"What is an MCC merchant category code?", "business-profile-mcc", nil},
	{"My website could not be reached by Stripe", "business-profile-url", nil},
	{"I don't have a website, can I describe my products instead?", "business-profile-product-description", nil},
	{"Accept the Stripe terms of service, tos_acceptance.ip", "tos-acceptance", nil},
	{"tos_acceptance.date", "tos-acceptance", nil},
	{"company.tax_id", "company-tax-id", nil},
	{"EIN does not match the IRS records", "company-tax-id", nil},
	{"Upload a certificate of incorporation to verify the company", "company-verification-document", nil},
	{"company.owners_provided", "owners-provided", nil},
	{"Who counts as a beneficial owner with 25% ownership?", "owners", nil},
	{"directors.first_name is due", "directors", nil},
	{"executives.dob.day", "executives", nil},
	{"Who should be the company representative?", "representative", nil},
	{"How do I log in to the Express Dashboard?", "express-dashboard-login-link", nil},
	{"Where can I change my payout bank account in the Express Dashboard?", "express-dashboard", []string{"external-account"}},
	{"What do currently_due and eventually_due mean?", "requirements-hash", nil},
	{"future_requirements will become due next month", "future-requirements", nil},
	{"card_payments capability is inactive", "capabilities", nil},
	{"verification_document_expired", "verification-errors", nil},
	{"Which test date of birth simulates a successful verification in test mode?", "testing-verification", []string{"individual-dob"}},
	{"I came back from the Stripe onboarding form, is my onboarding complete?", "hosted-onboarding-return", nil},
}

// ungroundedCases are questions the corpus does not answer: other domains,
// and near misses that share a word or two with it.
var ungroundedCases = []string{
	"how do I bake sourdough",
	"what is the VAT rate in Peru",
	"How do I open a bank account in Peru?",
	"What is the weather tomorrow in Berlin?",
	"Explain Kubernetes pod autoscaling",
	"Which shipping carrier is cheapest for parcels to Japan?",
	"Can I get a refund for my order?",
	"What are the customs duties for importing shoes into Canada?",
	"Who won the football world cup in 2014?",
	"How do I reset my router password?",
	"Translate this sentence into French",
	"What is the capital of Australia?",
	"Recommend a good laptop for programming",
	"How many calories are in an avocado?",
	"What is the exchange rate from euros to yen today?",
	"Write a poem about the sea",
	"How do I file my personal income tax return in Germany?",
	"What time does the store close on Sunday?",
}
