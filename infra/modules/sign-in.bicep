// App Service authentication (Easy Auth) for the people who read runs: Microsoft Entra sign-in,
// with no client secret (a browser sign-in then returns an ID token only, which is all the app reads).
//
// Nothing is required at the platform: programs keep calling with function keys, Event Grid with
// its system key. The platform checks any token it is given and passes the signed-in caller to the
// code in X-MS-CLIENT-PRINCIPAL; the code decides: the Evaluate page wants a signed-in person
// (api/principal.py). The golden download wants more than that unsigned header: the token store is on,
// so the platform forwards the person's Entra ID token (X-MS-TOKEN-AAD-ID-TOKEN), whose signature,
// audience, issuer, expiry and admin role the code checks against the tenant's keys (api/tokens.py).

param functionAppName string

@description('Application (client) id of the Entra app registration people sign in to.')
param clientId string

@description('Tenant whose people may sign in.')
param tenantId string = tenant().tenantId

resource app 'Microsoft.Web/sites@2024-04-01' existing = {
  name: functionAppName
}

resource signIn 'Microsoft.Web/sites/config@2024-04-01' = {
  // checkov reads every sites/config resource as the site's web settings; this one is authsettingsV2,
  // whose schema holds none of the properties these checks look for (they are the site's, in function-app.bicep):
  // checkov:skip=CKV_AZURE_13:This resource IS App Service authentication (authsettingsV2, platform.enabled); the check only knows the classic authsettings shape.
  // checkov:skip=CKV_AZURE_63:HTTP logging is a web-settings property, not an authsettingsV2 one; the app logs to Application Insights.
  // checkov:skip=CKV_AZURE_65:Detailed error pages are a web-settings property, not an authsettingsV2 one.
  // checkov:skip=CKV_AZURE_66:Failed request tracing is a web-settings property, not an authsettingsV2 one.
  // checkov:skip=CKV_AZURE_80:.NET version is a web-settings property; the app runs Python.
  // checkov:skip=CKV_AZURE_88:Azure Files is a site setting; Flex Consumption apps mount none.
  // checkov:skip=CKV_AZURE_222:Public network access is the site's (skipped there with its reason), not an authsettingsV2 property.
  parent: app
  name: 'authsettingsV2'
  properties: {
    platform: {
      enabled: true
    }
    globalValidation: {
      // The code answers an anonymous caller itself: 401 or a sign-in redirect on the page, 403 on
      // the golden download; requiring sign-in here would refuse function keys and Event Grid.
      requireAuthentication: false
      unauthenticatedClientAction: 'AllowAnonymous'
    }
    identityProviders: {
      azureActiveDirectory: {
        enabled: true
        registration: {
          clientId: clientId
          openIdIssuer: '${environment().authentication.loginEndpoint}${tenantId}/v2.0'
        }
        validation: {
          allowedAudiences: [
            clientId
            'api://${clientId}'
          ]
        }
      }
    }
    login: {
      tokenStore: {
        // On: without it the platform forwards no token, and the code refuses every golden download
        // (and role claims may not arrive at all). Where the tokens are kept is the platform's default:
        // authsettingsV2 offers Blob storage only through a SAS URL in an app setting (a secret, and the
        // storage account refuses shared keys), not through the app's identity (infra/README.md).
        enabled: true
      }
    }
    httpSettings: {
      requireHttps: true
    }
  }
}
