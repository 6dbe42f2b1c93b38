module bothy/libraries/go/webhookverify

go 1.24.0
