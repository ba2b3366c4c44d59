// The one storage account: Functions host and Durable task hub (blobs, queues, tables), the
// deployment package, the collections with their runs, and dead-lettered events.
// Entra sign-in only: shared keys are off, so no connection string to it can work.

@description('Storage account name (3-24 lowercase letters and digits).')
@minLength(3)
@maxLength(24)
param name string
param location string
param tags object

@description('Replication.')
param sku string

@description('Blob containers to create, all private.')
param containerNames array

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  // checkov:skip=CKV_AZURE_35:No virtual network here: the app on Flex Consumption, Event Grid and the admin reach the account over its public endpoint; shared keys are off, so every request needs an Entra token with a data role.
  // checkov:skip=CKV_AZURE_59:Same reason as CKV_AZURE_35: public network access is how the app and the admin reach the account; authorization is Entra-only.
  // checkov:skip=CKV_AZURE_206:Replication is the storageSku parameter (LRS by default: runs are re-made from the golden file the team keeps); choose Standard_ZRS or Standard_GZRS for production.
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: {
    name: sku
  }
  properties: {
    accessTier: 'Hot'
    allowSharedKeyAccess: false
    defaultToOAuthAuthentication: true
    allowBlobPublicAccess: false
    allowCrossTenantReplication: false
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      // The app on Flex Consumption without a virtual network, Event Grid and the person saving
      // golden files all come over the public endpoint; every request still needs an Entra token.
      defaultAction: 'Allow'
      bypass: 'AzureServices'
    }
    encryption: {
      keySource: 'Microsoft.Storage'
      requireInfrastructureEncryption: true
      services: {
        blob: {
          enabled: true
          keyType: 'Account'
        }
        file: {
          enabled: true
          keyType: 'Account'
        }
        queue: {
          enabled: true
          keyType: 'Account'
        }
        table: {
          enabled: true
          keyType: 'Account'
        }
      }
    }
  }
}

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: storage
  name: 'default'
  properties: {
    // A golden file overwritten or deleted by mistake can be brought back for a week.
    deleteRetentionPolicy: {
      enabled: true
      days: 7
    }
    containerDeleteRetentionPolicy: {
      enabled: true
      days: 7
    }
  }
}

resource containers 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = [for containerName in containerNames: {
  parent: blobService
  name: containerName
  properties: {
    publicAccess: 'None'
  }
}]

// Durable Functions keeps its control and work-item queues and its history tables here.
resource queueService 'Microsoft.Storage/storageAccounts/queueServices@2023-05-01' = {
  parent: storage
  name: 'default'
}

resource tableService 'Microsoft.Storage/storageAccounts/tableServices@2023-05-01' = {
  parent: storage
  name: 'default'
}

output name string = storage.name
output id string = storage.id
