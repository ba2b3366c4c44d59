// Azure AI Search: an existing service referenced by name (or one created here), and the two roles
// the app needs on it. Deployed into the service's own resource group.
// An existing service must accept Entra sign-in on its data plane (authOptions aadOrApiKey, or
// local auth disabled); the app never holds an API key.

param name string

@description('Create the service instead of using an existing one.')
param create bool = false
param sku string = 'basic'

@description('Semantic ranker plan of a service created here: free stops after 1,000 semantic queries a month (HTTP 402), standard bills each query past those.')
@allowed([
  'disabled'
  'free'
  'standard'
])
param semanticSearchPlan string = 'standard'
param location string
param tags object

@description('Principal (object) id of the app\'s user-assigned identity.')
param principalId string

// Search Index Data Reader: run queries (the $count query of the index's state among them) and look
// documents up by key, in every index; no writes.
var searchIndexDataReaderRoleId = '1407120a-92aa-4202-b7e9-c0e197c71c8f'
// Reader: read index definitions (key field, vector fields and profiles, semantic configurations,
// the ETag) with SearchIndexClient.get_index; it cannot read API keys, index content or the index
// statistics, which the app does without. Search Service Contributor would read those too, but could
// change and delete indexes and read admin keys.
var readerRoleId = 'acdd72a7-3385-48ef-bd42-f606fba81ae7'

resource created 'Microsoft.Search/searchServices@2023-11-01' = if (create) {
  // checkov:skip=CKV_AZURE_208:Created only for trying the app (createSearchService); one replica is enough to evaluate, and a production index lives in the team's own service, sized by them.
  // checkov:skip=CKV_AZURE_209:Same reason as CKV_AZURE_208: the query SLA needs more replicas than an evaluation target needs.
  name: name
  location: location
  tags: tags
  sku: {
    name: sku
  }
  properties: {
    replicaCount: 1
    partitionCount: 1
    hostingMode: 'default'
    // Entra sign-in only: no admin or query key works.
    disableLocalAuth: true
    publicNetworkAccess: 'enabled'
    // keyword_semantic and hybrid_semantic need the semantic ranker. One run spends a semantic query
    // per question per semantic setup, so the free plan's 1,000 a month end within the first run of a
    // 1,000-question golden file; infra/README says what standard costs.
    semanticSearch: semanticSearchPlan
  }
}

resource search 'Microsoft.Search/searchServices@2023-11-01' existing = {
  name: name
}

resource indexDataReader 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(search.id, principalId, searchIndexDataReaderRoleId)
  scope: search
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', searchIndexDataReaderRoleId)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
  dependsOn: [
    created
  ]
}

resource definitionReader 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(search.id, principalId, readerRoleId)
  scope: search
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', readerRoleId)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
  dependsOn: [
    created
  ]
}
