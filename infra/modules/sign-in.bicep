// App Service authentication (Easy Auth) for the people who read runs: Microsoft Entra sign-in,
// with no client secret (a browser sign-in then returns an ID token only, which is all the app reads).
//
// Nothing is required at the platform: programs keep calling with function keys, Event Grid with
// its system key. The platform checks any token it is given and passes the signed-in caller to the
// code in X-MS-CLIENT-PRINCIPAL; the code decides: the Evaluate page wants a signed-in person, the
// golden download a person holding the admin app role (api/principal.py).

param functionAppName string

@description('Application (client) id of the Entra app registration people sign in to.')
param clientId string

@description('Tenant whose people may sign in.')
param tenantId string = tenant().tenantId

resource app 'Microsoft.Web/sites@2024-04-01' existing = {
  name: functionAppName
}

resource signIn 'Microsoft.Web/sites/config@2024-04-01' = {
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
        // The app reads the caller's claims from the header on each request; it keeps no tokens.
        enabled: false
      }
    }
    httpSettings: {
      requireHttps: true
    }
  }
}
