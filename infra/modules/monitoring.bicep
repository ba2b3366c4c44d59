// Application Insights on a Log Analytics workspace, with local (instrumentation key) ingestion off:
// the app sends telemetry signed in as its identity (Monitoring Metrics Publisher, app-roles.bicep).

param workspaceName string
param appInsightsName string
param location string
param tags object

resource workspace 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: workspaceName
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: 30
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: appInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: workspace.id
    DisableLocalAuth: true
  }
}

output name string = appInsights.name
// With local auth off the connection string names where to send, not a credential.
output connectionString string = appInsights.properties.ConnectionString
