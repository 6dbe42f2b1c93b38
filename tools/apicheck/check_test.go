package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func contract(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../api/openapi.yaml")
	require.NoError(t, err)
	return string(b)
}

func TestTheContractPasses(t *testing.T) {
	t.Parallel()
	problems, err := Check([]byte(contract(t)))
	require.NoError(t, err)
	require.Empty(t, problems)
}

// TestCheckFindsEachDefect breaks the real contract in one place per case
// and expects the matching problem.
func TestCheckFindsEachDefect(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		anchor  string // when set, old is replaced at its first place after anchor
		old     string
		new     string
		problem string
	}{
		{
			name:    "an operation without x-authz-action",
			old:     "      x-authz-action: identity.me.read\n",
			new:     "",
			problem: "GET /me: x-authz-action is missing",
		},
		{
			name:    "an operation without tags",
			old:     "      operationId: getMe\n      tags: [Identity]\n",
			new:     "      operationId: getMe\n",
			problem: "GET /me: tags are missing",
		},
		{
			name:    "an undeclared tag",
			old:     "      operationId: getMe\n      tags: [Identity]\n",
			new:     "      operationId: getMe\n      tags: [People]\n",
			problem: "GET /me: tag People is not declared under tags",
		},
		{
			name:    "an authenticated operation without 401",
			old:     "        '204':\n          description: The session is ended.\n        '401':\n          $ref: '#/components/responses/Unauthorized'\n",
			new:     "        '204':\n          description: The session is ended.\n",
			problem: "DELETE /sessions/current: response 401 is missing (authenticated operation)",
		},
		{
			name:    "an operation with path IDs without 404",
			old:     "        '204':\n          description: The message is deleted.\n        '400':\n          $ref: '#/components/responses/BadRequest'\n        '401':\n          $ref: '#/components/responses/Unauthorized'\n        '403':\n          $ref: '#/components/responses/Forbidden'\n        '404':\n          $ref: '#/components/responses/NotFound'\n",
			new:     "        '204':\n          description: The message is deleted.\n        '400':\n          $ref: '#/components/responses/BadRequest'\n        '401':\n          $ref: '#/components/responses/Unauthorized'\n        '403':\n          $ref: '#/components/responses/Forbidden'\n",
			problem: "DELETE /messages/{messageId}: response 404 is missing (path IDs)",
		},
		{
			name:    "a problem response written inline",
			old:     "        '204':\n          description: The message is deleted.\n        '400':\n          $ref: '#/components/responses/BadRequest'\n",
			new:     "        '204':\n          description: The message is deleted.\n        '400':\n          description: Bad.\n",
			problem: "DELETE /messages/{messageId}: response 400 is not a $ref to components/responses",
		},
		{
			name:    "a request body that accepts unknown members",
			old:     "    SpaceCreate:\n      type: object\n      additionalProperties: false\n",
			new:     "    SpaceCreate:\n      type: object\n",
			problem: "POST /spaces request body #/components/schemas/SpaceCreate: object schema without additionalProperties: false",
		},
		{
			name:    "a nested request object that accepts unknown members",
			old:     "    AppDelivery:\n      type: object\n      additionalProperties: false\n",
			new:     "    AppDelivery:\n      type: object\n",
			problem: "POST /apps request body #/components/schemas/AppDelivery: object schema without additionalProperties: false",
		},
		{
			name:    "nullable",
			old:     "        hmac_enabled:\n          type: boolean\n",
			new:     "        hmac_enabled:\n          type: boolean\n          nullable: true\n",
			problem: "nullable is not allowed (no JSON null)",
		},
		{
			name:    "an unused schema",
			old:     "  schemas:\n    Id:\n",
			new:     "  schemas:\n    Orphan:\n      type: string\n    Id:\n",
			problem: "schema Orphan is not used",
		},
		{
			name:    "an example that breaks its schema",
			old:     "                    event_seq: 4712\n                    event_id: 01938f2e-4c1a-7b3e-9d2f-5a6b7c8d9e04\n                    event_type: message.created\n                    status: pending\n                    attempt: 3\n",
			new:     "                    event_seq: 4712\n                    event_id: 01938f2e-4c1a-7b3e-9d2f-5a6b7c8d9e04\n                    event_type: message.created\n                    status: retrying\n                    attempt: 3\n",
			problem: "POST /webhook-deliveries/{deliveryId}/redeliver response 202 application/json example redelivered does not validate",
		},
		{
			name:    "a schema example with a bad format",
			old:     "      description: A UUIDv7 in canonical lower-case form.\n      example: 01938f2e-4c1a-7b3e-9d2f-5a6b7c8d9e01\n",
			new:     "      description: A UUIDv7 in canonical lower-case form.\n      example: tracker\n",
			problem: "schema Id example does not validate: /: string doesn't match the format",
		},
		{
			// Foreign to the contract, yet no one's real host (the repository's
			// white label): a documentation address and a .localhost domain.
			name:    "a foreign host",
			old:     "https://hooks.example.com/bothy/events-v2",
			new:     "https://192.0.2.10/bothy/events-v2",
			problem: "host 192.0.2.10 is not under example.com",
		},
		{
			name:    "a foreign address",
			old:     "          example: sam@example.com\n",
			new:     "          example: sam@mail.localhost\n",
			problem: "address domain mail.localhost is not example.com",
		},
		{
			name:    "an em dash",
			old:     "Signs a person in with email and password",
			new:     "Signs a person in \u2014 with email and password",
			problem: "en or em dash",
		},
		{
			name:    "a webhook with another action",
			anchor:  "  channel.created:\n",
			old:     "      x-authz-action: webhook_out.deliver\n",
			new:     "      x-authz-action: channel.read\n",
			problem: "webhook channel.created: x-authz-action is not webhook_out.deliver",
		},
		{
			name:    "a webhook without receivers",
			old:     "      x-receive-action: self\n      x-receivers: [agent]\n",
			new:     "      x-receive-action: self\n",
			problem: "webhook agent.invocation.requested: x-receivers is missing",
		},
		{
			name:    "a webhook without the 410 response",
			old:     "        '410':\n          $ref: '#/components/responses/WebhookGone'\n        '429':\n          $ref: '#/components/responses/WebhookThrottled'\n  message.updated:",
			new:     "        '429':\n          $ref: '#/components/responses/WebhookThrottled'\n  message.updated:",
			problem: "webhook message.created: responses are [2XX 429], want 2XX, 410 and 429",
		},
		{
			name:    "a webhook example of another type",
			old:     "                  seq: 4713\n                  type: message.updated\n",
			new:     "                  seq: 4713\n                  type: message.created\n",
			problem: "webhook message.updated: example delivery has another type",
		},
		{
			name:    "an event type without webhook entry",
			old:     "        - agent.invocation.requested\n      description: A durable event type",
			new:     "        - agent.invocation.requested\n        - space.created\n      description: A durable event type",
			problem: "event type space.created has no x-webhooks entry",
		},
		{
			name:    "a problem code without a row",
			old:     "        - unavailable\n        - internal\n      x-problem-codes:\n",
			new:     "        - unavailable\n        - internal\n        - gone\n      x-problem-codes:\n",
			problem: "ProblemCode: x-problem-codes",
		},
	}
	spec := contract(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before, after := "", spec
			if tc.anchor != "" {
				i := strings.Index(spec, tc.anchor)
				require.GreaterOrEqual(t, i, 0, "anchor")
				before, after = spec[:i], spec[i:]
			} else {
				require.Equal(t, 1, strings.Count(spec, tc.old), "the mutation must hit exactly one place")
			}
			require.Contains(t, after, tc.old)
			problems, err := Check([]byte(before + strings.Replace(after, tc.old, tc.new, 1)))
			require.NoError(t, err)
			require.NotEmpty(t, problems)
			found := false
			for _, p := range problems {
				if strings.Contains(p, tc.problem) {
					found = true
				}
			}
			require.True(t, found, "want %q in %q", tc.problem, problems)
		})
	}
}
