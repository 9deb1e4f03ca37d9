module reconcile

go 1.26.8
