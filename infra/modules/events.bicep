// Saving <collection>/golden.jsonl fires Event Grid BlobCreated, delivered to the function
// golden_changed. The system topic exists from the first deployment; the subscription only once
// deploySubscription is true, because Event Grid checks that the function exists when it is created.

param systemTopicName string
param location string
param tags object
param storageAccountName string
param collectionsContainerName string
param deadLetterContainerName string
param functionAppName string

@description('Create the subscription to golden_changed (after the code is published).')
param deploySubscription bool = false

// The Event Grid trigger's function name: a contract with triggers/ in the Function App.
var goldenChangedFunctionName = 'golden_changed'
// Storage Blob Data Contributor: the topic's own identity writes undeliverable events, in the
// dead-letter container only.
var storageBlobDataContributorRoleId = 'ba92f5b4-2d11-453d-a403-e96b0029c9fe'

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName

  resource blobService 'blobServices' existing = {
    name: 'default'

    resource deadLetter 'containers' existing = {
      name: deadLetterContainerName
    }
  }
}

resource functionApp 'Microsoft.Web/sites@2024-04-01' existing = {
  name: functionAppName
}

resource systemTopic 'Microsoft.EventGrid/systemTopics@2022-06-15' = {
  name: systemTopicName
  location: location
  tags: tags
  identity: {
    // Shared keys are off on the account, so dead-lettering signs in as the topic.
    type: 'SystemAssigned'
  }
  properties: {
    source: storage.id
    topicType: 'Microsoft.Storage.StorageAccounts'
  }
}

resource deadLetterWriter 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  // The topic's principal id is known only once it exists; its resource id names the same principal.
  name: guid(storage::blobService::deadLetter.id, systemTopic.id, storageBlobDataContributorRoleId)
  scope: storage::blobService::deadLetter
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', storageBlobDataContributorRoleId)
    principalId: systemTopic.identity.principalId
    principalType: 'ServicePrincipal'
  }
}

resource goldenChanged 'Microsoft.EventGrid/systemTopics/eventSubscriptions@2022-06-15' = if (deploySubscription) {
  parent: systemTopic
  name: 'golden-changed'
  properties: {
    destination: {
      endpointType: 'AzureFunction'
      properties: {
        resourceId: '${functionApp.id}/functions/${goldenChangedFunctionName}'
        // One event per call: each save is its own run.
        maxEventsPerBatch: 1
        preferredBatchSizeInKilobytes: 64
      }
    }
    eventDeliverySchema: 'EventGridSchema'
    filter: {
      includedEventTypes: [
        'Microsoft.Storage.BlobCreated'
      ]
      // Only <collection>/golden.jsonl in the collections container; runs written beside it never fire.
      subjectBeginsWith: '/blobServices/default/containers/${collectionsContainerName}/blobs/'
      subjectEndsWith: '/golden.jsonl'
      isSubjectCaseSensitive: true
    }
    retryPolicy: {
      maxDeliveryAttempts: 30
      eventTimeToLiveInMinutes: 1440
    }
    deadLetterWithResourceIdentity: {
      identity: {
        type: 'SystemAssigned'
      }
      deadLetterDestination: {
        endpointType: 'StorageBlob'
        properties: {
          resourceId: storage.id
          blobContainerName: deadLetterContainerName
        }
      }
    }
  }
  dependsOn: [
    deadLetterWriter
  ]
}

output systemTopicName string = systemTopic.name
