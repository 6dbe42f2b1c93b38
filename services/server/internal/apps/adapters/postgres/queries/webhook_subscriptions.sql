-- name: WebhookSubscriptionGetByID :one
SELECT * FROM webhook_subscriptions WHERE id = $1;
