module example.com/policyc-kubeclient

go 1.19
