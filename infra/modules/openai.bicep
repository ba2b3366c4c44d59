// An existing Azure OpenAI account that embeds queries for vector fields without a vectorizer, and
// the one role the app needs on it. Deployed into the account's own resource group.

param accountName string

@description('Principal (object) id of the app\'s user-assigned identity.')
param principalId string

// Cognitive Services OpenAI User: call deployments (embeddings); cannot change or list keys.
var cognitiveServicesOpenAiUserRoleId = '5e0bd9bd-7b93-4f28-af87-19fc36ad61bd'

resource account 'Microsoft.CognitiveServices/accounts@2023-05-01' existing = {
  name: accountName
}

resource openAiUser 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(account.id, principalId, cognitiveServicesOpenAiUserRoleId)
  scope: account
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', cognitiveServicesOpenAiUserRoleId)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

output endpoint string = account.properties.endpoint
