// The Flex Consumption plan and the Linux function app. The runtime, scale and deployment storage
// live in functionAppConfig; Flex refuses FUNCTIONS_WORKER_RUNTIME and WEBSITE_RUN_FROM_PACKAGE.

param name string
param planName string
param location string
param tags object

@description('Resource id of the user-assigned identity the app runs as.')
param identityId string

@description('Blob container URL that holds the deployment package.')
param deploymentContainerUrl string

param instanceMemoryMB int
param maximumInstanceCount int

@description('App settings, name -> value; every value a plain string and none a secret.')
param appSettings object

// The Python version the app and its pinned packages are built and tested on.
var pythonVersion = '3.11'

resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  // checkov:skip=CKV_AZURE_225:A run is a batch job that Durable Functions resumes after a failure; zone redundancy would buy availability this app does not need.
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    name: 'FC1'
    tier: 'FlexConsumption'
  }
  properties: {
    // Linux.
    reserved: true
  }
}

resource app 'Microsoft.Web/sites@2024-04-01' = {
  // checkov:skip=CKV_AZURE_222:Event Grid delivers BlobCreated to golden_changed over the public endpoint and people call evaluate_now; every function needs a key or a sign-in.
  // checkov:skip=CKV_AZURE_17:Callers are Event Grid (system key) and people (function key or Entra sign-in), none of which present client certificates.
  // checkov:skip=CKV_AZURE_212:The app scales from zero on events; an always-ready instance would cost money for a job that runs a few times a day and is resumed by Durable Functions.
  // checkov:skip=CKV_AZURE_213:A health-check path takes failing instances out of a load-balanced pool; this app keeps no instance warm and a failed activity is retried by the orchestrator.
  name: name
  location: location
  tags: tags
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    clientCertEnabled: false
    siteConfig: {
      minTlsVersion: '1.2'
      scmMinTlsVersion: '1.2'
      ftpsState: 'Disabled'
      http20Enabled: true
      appSettings: [for setting in items(appSettings): {
        name: setting.key
        value: setting.value
      }]
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: deploymentContainerUrl
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        instanceMemoryMB: instanceMemoryMB
        maximumInstanceCount: maximumInstanceCount
      }
      runtime: {
        name: 'python'
        version: pythonVersion
      }
    }
  }
}

// Publishing signs in with Entra (az uses the signed-in account); no FTP or SCM password exists.
resource ftpBasicAuth 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = {
  parent: app
  name: 'ftp'
  properties: {
    allow: false
  }
}

resource scmBasicAuth 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = {
  parent: app
  name: 'scm'
  properties: {
    allow: false
  }
}

output name string = app.name
output id string = app.id
