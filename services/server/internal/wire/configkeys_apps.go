package wire

import "bothy/server/internal/platform/config"

// appsConfigKeys are the keys of the apps module outside the webhook
// delivery: the address rule shared by manifests and subscriptions.
func appsConfigKeys() []config.Key {
	return []config.Key{
		{Name: "webhook.allowed_hosts", Kind: config.KindHostList, Chapter: chapter03,
			Doc: "Hosts (host[:port], default port 443) that subscription URLs and manifest delivery addresses may name; also the host policy of the webhook egress client."},
	}
}
