module example.com/policyc-embed

go 1.19
