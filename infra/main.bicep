// The retrieval-evaluation Function App on Azure Functions Flex Consumption, signed in everywhere
// with one user-assigned managed identity: no key, connection string or password is set anywhere.
//
// Deploy in two steps (infra/README.md): first everything but the Event Grid subscription, then,
// once the code is published and the function `golden_changed` exists, again with
// deployEventSubscription=true.
targetScope = 'resourceGroup'

@description('Short name of this environment (dev, test, prod): part of every resource name and tag.')
@minLength(1)
@maxLength(12)
param environmentName string

@description('Region for every resource; it must offer Flex Consumption (az functionapp list-flexconsumption-locations).')
param location string = resourceGroup().location

@description('Create the Event Grid subscription that calls golden_changed. Leave false until the code is published: Event Grid checks that the function exists.')
param deployEventSubscription bool = false

@description('Object id of a person (admin) who may save golden files and read runs in the collections container; empty for nobody.')
param adminPrincipalId string = ''

@description('Memory of one instance; a local run of the sample peaks at 730 MB, a 774-section corpus at 840 MB.')
@allowed([
  512
  2048
  4096
])
param instanceMemoryMB int = 2048

@description('Most instances the app scales out to.')
@minValue(40)
@maxValue(1000)
param maximumInstanceCount int = 40

@description('Replication of the storage account that holds the host state, the collections and the runs.')
@allowed([
  'Standard_LRS'
  'Standard_ZRS'
  'Standard_GRS'
  'Standard_GZRS'
  'Standard_RAGRS'
  'Standard_RAGZRS'
])
param storageSku string = 'Standard_LRS'

@description('Container holding one folder per collection (<collection>/golden.jsonl) and its runs.')
param collectionsContainerName string = 'collections'

@description('Name of an Azure AI Search service the app evaluates; empty when every target is the embedded engine.')
param searchServiceName string = ''

@description('Resource group of that search service.')
param searchResourceGroupName string = resourceGroup().name

@description('Create the search service (Entra sign-in only, semantic ranker on semanticSearchPlan) instead of using an existing one.')
param createSearchService bool = false

@description('Tier of a search service created here.')
@allowed([
  'basic'
  'standard'
  'standard2'
  'standard3'
])
param searchSku string = 'basic'

@description('Semantic ranker plan of a search service created here (an existing service keeps its own): standard, since free stops after 1,000 semantic queries a month.')
@allowed([
  'disabled'
  'free'
  'standard'
])
param semanticSearchPlan string = 'standard'

@description('Name of an Azure OpenAI account that embeds queries for vector fields without a vectorizer; empty for none.')
param openAiAccountName string = ''

@description('Resource group of that Azure OpenAI account.')
param openAiResourceGroupName string = resourceGroup().name

@description('Embedding deployment in that account.')
param openAiEmbeddingDeployment string = ''

@description('EVALUATION_TARGETS: collection name -> list of target specs (see the README).')
param evaluationTargets object = {}

@description('EVALUATION_DEBOUNCE_SECONDS: durable timer between a save and its run.')
@minValue(0)
param debounceSeconds int = 60

@description('EVALUATION_ONLY: setup patterns to run, comma-separated; empty runs every setup.')
param onlySetups string = ''

@description('EVALUATION_SKIP: setup patterns to leave out. On Flex Consumption the cross-encoder took 13-19 s a search and found less, so hybrid_reranked is skipped by default.')
param skipSetups string = 'hybrid_reranked'

@description('EVALUATION_BY: what counts as found.')
@allowed([
  'doc'
  'chunk'
  'evidence'
])
param judgeBy string = 'doc'

@description('EVALUATION_TIMED: questions timed one at a time per setup.')
@minValue(0)
param timedQuestions int = 50

@description('EVALUATION_TIME_BUDGET: seconds of timed searches per setup after which its timing stops (0: none).')
@minValue(0)
param timeBudgetSeconds int = 20

@description('EVALUATION_EQUALLY_FAST_MS: setups whose search times are this many milliseconds apart or less are equally fast (a network round trip to a search service); such a difference never decides a pick.')
@minValue(0)
param equallyFastMs int = 5

@description('EVALUATION_EXHAUSTIVE: true searches every setup on every question; false races the costly setups (a cross-encoder, a search service), each stopped once shown to find more than the picks allow fewer than a setup that searches every question.')
param exhaustive bool = false

@description('EVALUATION_SHARD_SECONDS: estimated seconds of the searches of one setup per activity; a costlier setup is cut into shards ranked in parallel.')
@minValue(1)
param shardSeconds int = 180

@description('EVALUATION_SHARD_QUESTIONS: most questions one shard ranks (0: no bound).')
@minValue(0)
param shardQuestions int = 0

@description('EVALUATION_JUDGE_DEPLOYMENT: the chat deployment on the Azure OpenAI account (openAiAccountName) that grades each run\'s holes once measured on the golden file\'s labels; empty: no judging.')
param judgeDeployment string = ''

@description('EVALUATION_JUDGE_MAX_COST: the most one run\'s judging may cost, in the price table\'s currency; empty: no cap.')
param judgeMaxCost string = ''

@description('EVALUATION_JUDGE_CALIBRATION: labels set aside to measure the judge on.')
@minValue(2)
param judgeCalibration int = 100

@description('EVALUATION_JUDGE_MIN_KAPPA: the low end of kappa\'s 95% interval the judge must reach for its grades to count.')
param judgeMinKappa string = '0.4'

@description('EVALUATION_JUDGE_PICKS_FROM: human (the people\'s labels) or judged (with the judge\'s grades, said on every pick).')
@allowed([
  'human'
  'judged'
])
param judgePicksFrom string = 'human'

@description('EVALUATION_JUDGE_ALLOW_FAMILY: judge even with a model of a family under test, the conflict printed on every pick.')
param judgeAllowFamily bool = false

@description('EVALUATION_JUDGE_PRICES: a price table as JSON (models -> input and output dollars per million tokens); empty: the shipped one.')
param judgePrices string = ''

@description('EVALUATION_JUDGE_PAIRS: pairs one judging activity grades.')
@minValue(1)
param judgePairs int = 100

@description('EVALUATION_RETIME: when-changed reuses the times of a run that timed the same index state live, and the results of unchanged questions it searched on the same state; always searches and times everything every run.')
@allowed([
  'when-changed'
  'always'
])
param retime string = 'when-changed'

@description('EVALUATION_RETIME_MAX_DAYS: times older than this many days are measured again.')
@minValue(0)
param retimeMaxDays int = 7

@description('EVALUATION_OPENED_INDEXES: opened embedded indexes one worker process keeps, shared by the activities it runs at once (0: each activity opens its own).')
@minValue(0)
param openedIndexes int = 2

@description('EVALUATION_ADMIN_ROLE: app role a signed-in person needs to download a golden file.')
param adminAppRole string = 'admin'

@description('Application (client) id of the Entra app registration people sign in to for the Evaluate page and golden downloads (App Service authentication); empty leaves sign-in off, and then no one can open the page or download a golden file.')
param signInClientId string = ''

@description('EVALUATION_GOLDEN_MAX_BYTES: a golden file larger than this is refused before it is read or hashed (16 MiB holds about 30,000 questions of 500 bytes).')
@minValue(1)
param goldenMaxBytes int = 16777216

// Whose sign-ins the app believes, and where that tenant publishes the keys its tokens are signed with
// (api/tokens.py checks every token it is forwarded against them).
var signInTenantId = tenant().tenantId
var signInIssuer = empty(signInClientId) ? '' : '${environment().authentication.loginEndpoint}${signInTenantId}/v2.0'
var signInJwksUrl = empty(signInClientId) ? '' : '${environment().authentication.loginEndpoint}${signInTenantId}/discovery/v2.0/keys'

// One token per subscription, resource group and environment: two environments never share a name.
var token = toLower(uniqueString(subscription().id, resourceGroup().id, environmentName))
var tags = {
  application: 'retrieval-evaluation'
  environment: environmentName
}
var names = {
  identity: 'id-reval-${environmentName}-${token}'
  storage: take('streval${token}', 24)
  workspace: 'log-reval-${environmentName}-${token}'
  appInsights: 'appi-reval-${environmentName}-${token}'
  plan: 'plan-reval-${environmentName}-${token}'
  functionApp: 'func-reval-${environmentName}-${token}'
  systemTopic: 'evgt-reval-${environmentName}-${token}'
}
var deploymentContainerName = 'app-package'
var deadLetterContainerName = 'events-deadletter'
var storageAccountUrl = 'https://${names.storage}.blob.${environment().suffixes.storage}'
var searchEndpoint = empty(searchServiceName) ? '' : 'https://${searchServiceName}.search.windows.net'

// User-assigned rather than system-assigned: it exists before the app, so every role below is in
// place when the host first starts and when the first package is published, and its grants
// survive deleting and re-creating the app.
resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: names.identity
  location: location
  tags: tags
}

module storage 'modules/storage.bicep' = {
  name: 'storage'
  params: {
    name: names.storage
    location: location
    tags: tags
    sku: storageSku
    containerNames: [
      deploymentContainerName
      collectionsContainerName
      deadLetterContainerName
    ]
  }
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  params: {
    workspaceName: names.workspace
    appInsightsName: names.appInsights
    location: location
    tags: tags
  }
}

module appRoles 'modules/app-roles.bicep' = {
  name: 'app-roles'
  params: {
    storageAccountName: storage.outputs.name
    collectionsContainerName: collectionsContainerName
    appInsightsName: monitoring.outputs.name
    principalId: identity.properties.principalId
    adminPrincipalId: adminPrincipalId
  }
}

module search 'modules/search.bicep' = if (!empty(searchServiceName)) {
  name: 'search'
  scope: resourceGroup(searchResourceGroupName)
  params: {
    name: searchServiceName
    create: createSearchService
    sku: searchSku
    semanticSearchPlan: semanticSearchPlan
    location: location
    tags: tags
    principalId: identity.properties.principalId
  }
}

module openAi 'modules/openai.bicep' = if (!empty(openAiAccountName)) {
  name: 'openai'
  scope: resourceGroup(openAiResourceGroupName)
  params: {
    accountName: openAiAccountName
    principalId: identity.properties.principalId
  }
}

// Every app setting, in one place. The settings the Python code reads are checked against this
// object by tests/test_infra_settings.py; the rest are read by the Functions host and the Azure SDK.
var appSettings = {
  // Host and Durable Functions storage through the identity (no AzureWebJobsStorage connection string).
  AzureWebJobsStorage__accountName: storage.outputs.name
  AzureWebJobsStorage__credential: 'managedidentity'
  AzureWebJobsStorage__clientId: identity.properties.clientId
  // DefaultAzureCredential in the app signs in as this identity (an app may hold several).
  AZURE_CLIENT_ID: identity.properties.clientId
  // Telemetry with Entra ingestion: the component refuses its instrumentation key alone.
  APPLICATIONINSIGHTS_CONNECTION_STRING: monitoring.outputs.connectionString
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=${identity.properties.clientId};Authorization=AAD'
  // The app's own settings (README table; app/settings.py).
  EVALUATION_STORAGE_ACCOUNT_URL: storageAccountUrl
  EVALUATION_CONTAINER: collectionsContainerName
  EVALUATION_TARGETS: string(evaluationTargets)
  EVALUATION_DEBOUNCE_SECONDS: string(debounceSeconds)
  EVALUATION_ONLY: onlySetups
  EVALUATION_SKIP: skipSetups
  EVALUATION_BY: judgeBy
  EVALUATION_TIMED: string(timedQuestions)
  EVALUATION_TIME_BUDGET: string(timeBudgetSeconds)
  EVALUATION_EQUALLY_FAST_MS: string(equallyFastMs)
  EVALUATION_EXHAUSTIVE: string(exhaustive)
  EVALUATION_SHARD_SECONDS: string(shardSeconds)
  EVALUATION_SHARD_QUESTIONS: string(shardQuestions)
  EVALUATION_JUDGE_DEPLOYMENT: judgeDeployment
  EVALUATION_JUDGE_MAX_COST: judgeMaxCost
  EVALUATION_JUDGE_CALIBRATION: string(judgeCalibration)
  EVALUATION_JUDGE_MIN_KAPPA: judgeMinKappa
  EVALUATION_JUDGE_PICKS_FROM: judgePicksFrom
  EVALUATION_JUDGE_ALLOW_FAMILY: judgeAllowFamily ? 'true' : 'false'
  EVALUATION_JUDGE_PRICES: judgePrices
  EVALUATION_JUDGE_PAIRS: string(judgePairs)
  EVALUATION_RETIME: retime
  EVALUATION_RETIME_MAX_DAYS: string(retimeMaxDays)
  EVALUATION_OPENED_INDEXES: string(openedIndexes)
  EVALUATION_INDEX_CACHE: '/tmp/retrieval-eval-indexes'
  EVALUATION_ADMIN_ROLE: adminAppRole
  EVALUATION_SIGN_IN_CLIENT_ID: signInClientId
  EVALUATION_SIGN_IN_ISSUER: signInIssuer
  EVALUATION_SIGN_IN_JWKS_URL: signInJwksUrl
  EVALUATION_GOLDEN_MAX_BYTES: string(goldenMaxBytes)
  AZURE_SEARCH_ENDPOINT: searchEndpoint
  AZURE_OPENAI_ENDPOINT: empty(openAiAccountName) ? '' : openAi.outputs.endpoint
  AZURE_OPENAI_EMBEDDING_DEPLOYMENT: openAiEmbeddingDeployment
}

module functionApp 'modules/function-app.bicep' = {
  name: 'function-app'
  params: {
    name: names.functionApp
    planName: names.plan
    location: location
    tags: tags
    identityId: identity.id
    deploymentContainerUrl: '${storageAccountUrl}/${deploymentContainerName}'
    instanceMemoryMB: instanceMemoryMB
    maximumInstanceCount: maximumInstanceCount
    appSettings: appSettings
  }
  // The roles must hold before the host first reaches its storage and before the first publish.
  dependsOn: [
    appRoles
    search
    openAi
  ]
}

module signIn 'modules/sign-in.bicep' = if (!empty(signInClientId)) {
  name: 'sign-in'
  params: {
    functionAppName: functionApp.outputs.name
    clientId: signInClientId
    tenantId: signInTenantId
  }
}

module events 'modules/events.bicep' = {
  name: 'events'
  params: {
    systemTopicName: names.systemTopic
    location: location
    tags: tags
    storageAccountName: storage.outputs.name
    collectionsContainerName: collectionsContainerName
    deadLetterContainerName: deadLetterContainerName
    functionAppName: functionApp.outputs.name
    deploySubscription: deployEventSubscription
  }
}

output functionAppName string = functionApp.outputs.name
output storageAccountName string = storage.outputs.name
output storageAccountUrl string = storageAccountUrl
output collectionsContainerName string = collectionsContainerName
output deadLetterContainerName string = deadLetterContainerName
output systemTopicName string = events.outputs.systemTopicName
output identityClientId string = identity.properties.clientId
output searchEndpoint string = searchEndpoint
