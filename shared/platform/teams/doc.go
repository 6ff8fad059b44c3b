// Package teams is Parley's Microsoft Teams adapter, for a bot of the Bot
// Framework (an Azure Bot resource, single-tenant): a Receiver that verifies
// the connector's JWT against the Bot Framework's published keys and turns
// message activities (personal chats, group chats, channel threads) and
// Adaptive Card submissions into events; and a Client that posts, edits and
// types through the Bot Connector REST API with an app token from Microsoft
// Entra (client credentials).
//
// Authentication: https://learn.microsoft.com/azure/bot-service/rest-api/bot-framework-rest-connector-authentication
// Connector API: https://learn.microsoft.com/azure/bot-service/rest-api/bot-framework-rest-connector-api-reference
// Teams bots: https://learn.microsoft.com/microsoftteams/platform/bots/what-are-bots
package teams
