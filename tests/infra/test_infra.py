"""infra/*.bicep read with pycep-parser: the resources the issue names, Entra-only storage, the Flex
Consumption app, least-privilege roles with documented ids, and the Event Grid subscription's filter."""
from __future__ import annotations

import json
import re

import pytest

from bicep_model import (INFRA, MAIN, accessor_path, bicep_files, functions, module_calls, one, parameters, parse,
                         raw_lines, resolve, resources, secret_problems, strings, variables)
from test_infra_settings import bicep_settings

# Built-in role ids as Azure documents them (learn.microsoft.com, "Azure built-in roles").
BUILT_IN_ROLES = {
    "b7e6dc6d-f1e8-4753-8033-0f276bb0955b": "Storage Blob Data Owner",
    "ba92f5b4-2d11-453d-a403-e96b0029c9fe": "Storage Blob Data Contributor",
    "974c5e8b-45b9-4653-ba55-5f855dd0fb88": "Storage Queue Data Contributor",
    "0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3": "Storage Table Data Contributor",
    "3913510d-42f4-4e42-8a64-420c390055eb": "Monitoring Metrics Publisher",
    "1407120a-92aa-4202-b7e9-c0e197c71c8f": "Search Index Data Reader",
    "acdd72a7-3385-48ef-bd42-f606fba81ae7": "Reader",
    "5e0bd9bd-7b93-4f28-af87-19fc36ad61bd": "Cognitive Services OpenAI User",
}
# Roles this app must never hold: they manage resources, keys or other people's access.
TOO_BROAD = {
    "8e3af657-a8ff-443c-a75c-2fe8c4bcb635": "Owner",
    "b24988ac-6180-42a0-ab88-20f7382dd24c": "Contributor",
    "18d7d88d-d35e-4fb5-a5c3-7773c20a72d9": "User Access Administrator",
    "17d1049b-9a84-46fb-8f53-869881c3d3ab": "Storage Account Contributor",
    "7ca78c08-252a-4471-8644-bb5ff32d4ba0": "Search Service Contributor",
    "8ebe5a00-799e-43f5-93ac-243d3dce84a7": "Search Index Data Contributor",
}
# Settings Flex Consumption refuses (it sets the runtime, content and package itself).
FLEX_REFUSES = {"FUNCTIONS_EXTENSION_VERSION", "FUNCTIONS_WORKER_RUNTIME", "FUNCTIONS_WORKER_RUNTIME_VERSION",
                "WEBSITE_RUN_FROM_PACKAGE", "WEBSITE_CONTENTSHARE", "WEBSITE_CONTENTAZUREFILECONNECTIONSTRING",
                "WEBSITE_NODE_DEFAULT_VERSION", "SCM_DO_BUILD_DURING_DEPLOYMENT", "ENABLE_ORYX_BUILD"}
ROLE_ASSIGNMENT = "Microsoft.Authorization/roleAssignments"


def test_every_bicep_file_parses_and_every_module_is_used():
    files = bicep_files()
    assert MAIN in files and len(files) > 1
    for path in files:
        assert parse(path).get("resources") or parse(path).get("modules"), f"{path.name} declares nothing"
    called = {call["path"] for call in module_calls().values()}
    assert all(path.is_file() for path in called)
    assert called == set(files) - {MAIN}, "a module nobody calls, or a call to a missing file"


def test_the_resources_the_issue_names_are_created():
    created = {r.type for r in resources()}
    assert created >= {
        "Microsoft.ManagedIdentity/userAssignedIdentities",
        "Microsoft.Storage/storageAccounts", "Microsoft.Storage/storageAccounts/blobServices/containers",
        "Microsoft.OperationalInsights/workspaces", "Microsoft.Insights/components",
        "Microsoft.Web/serverfarms", "Microsoft.Web/sites", ROLE_ASSIGNMENT,
        "Microsoft.Search/searchServices",
        "Microsoft.EventGrid/systemTopics", "Microsoft.EventGrid/systemTopics/eventSubscriptions",
    }
    # the search service is referenced by name, and created only on request
    assert [r.symbol for r in resources("Microsoft.Search/searchServices", existing=True)] == ["search"]
    assert one("Microsoft.Search/searchServices").condition == "create"


def test_names_come_from_a_token_of_subscription_group_and_environment():
    (token,) = functions(variables(MAIN)["token"], "unique_string")
    assert functions(token, "subscription") and functions(token, "resource_group")
    assert "environmentName" in token.values()
    for key, name in variables(MAIN)["names"].items():
        assert any("${token}" in text for text in strings(name)), f"{key} is not named from the token: {name}"


# -- storage ---------------------------------------------------------------------------------------------------

def test_storage_takes_only_entra_sign_in_over_tls_1_2_with_no_public_blobs():
    storage = one("Microsoft.Storage/storageAccounts").body["properties"]
    assert storage["allowSharedKeyAccess"] is False
    assert storage["defaultToOAuthAuthentication"] is True
    assert storage["minimumTlsVersion"] == "TLS1_2"
    assert storage["allowBlobPublicAccess"] is False
    assert storage["supportsHttpsTrafficOnly"] is True
    containers = one("Microsoft.Storage/storageAccounts/blobServices/containers")
    assert containers.body["properties"]["publicAccess"] == "None"


def test_the_deployment_collections_and_dead_letter_containers_are_created():
    call = module_calls()["storage"]
    created = [resolve(MAIN, name) for name in call["params"]["containerNames"]]
    assert created == ["app-package", "collectionsContainerName", "events-deadletter"]
    assert parameters(MAIN)["collectionsContainerName"]["default"] == "collections"
    assert (
        module_calls()["functionApp"]["params"]["deploymentContainerUrl"]
        == "${storageAccountUrl}/${deploymentContainerName}"
    )
    assert bicep_settings()["EVALUATION_CONTAINER"] == "collectionsContainerName"
    assert module_calls()["events"]["params"]["deadLetterContainerName"] == "deadLetterContainerName"


# -- the function app ------------------------------------------------------------------------------------------

def test_the_plan_is_flex_consumption_fc1_on_linux():
    plan = one("Microsoft.Web/serverfarms").body
    assert plan["sku"] == {"name": "FC1", "tier": "FlexConsumption"}
    assert plan["properties"]["reserved"] is True
    app = one("Microsoft.Web/sites").body
    assert app["kind"] == "functionapp,linux"
    assert app["properties"]["serverFarmId"] == {"operator": {"type": "property_accessor",
                                                              "operands": {"operand_1": "plan", "operand_2": "id"}}}
    assert app["properties"]["httpsOnly"] is True


def test_the_app_runs_python_3_11_and_reads_its_package_as_the_identity():
    app = one("Microsoft.Web/sites")
    config = app.body["properties"]["functionAppConfig"]
    assert config["runtime"]["name"] == "python"
    assert resolve(app.file, config["runtime"]["version"]) == "3.11"
    storage = config["deployment"]["storage"]
    assert storage["type"] == "blobContainer"
    assert storage["authentication"] == {"type": "UserAssignedIdentity", "userAssignedIdentityResourceId": "identityId"}
    assert app.body["identity"] == {"type": "UserAssigned", "userAssignedIdentities": {"'${identityId}'": {}}}
    assert accessor_path(module_calls()["functionApp"]["params"]["identityId"]) == "identity.id"
    memory = parameters(MAIN)["instanceMemoryMB"]
    (allowed,) = [d["argument"] for d in memory["decorators"] if d["type"] == "allowed"]
    assert memory["default"] == 2048 and set(allowed) == {512, 2048, 4096}


def test_no_setting_flex_consumption_refuses_and_no_storage_connection_string():
    assert not FLEX_REFUSES & set(bicep_settings())
    assert "AzureWebJobsStorage" not in bicep_settings()


def test_host_storage_and_the_sdk_sign_in_as_the_user_assigned_identity():
    settings = bicep_settings()
    assert accessor_path(settings["AzureWebJobsStorage__accountName"]) == "storage.outputs.name"
    assert settings["AzureWebJobsStorage__credential"] == "managedidentity"
    assert accessor_path(settings["AzureWebJobsStorage__clientId"]) == "identity.properties.clientId"
    assert accessor_path(settings["AZURE_CLIENT_ID"]) == "identity.properties.clientId"
    assert one("Microsoft.ManagedIdentity/userAssignedIdentities").file == MAIN


def test_basic_publishing_credentials_are_off():
    policies = resources("Microsoft.Web/sites/basicPublishingCredentialsPolicies")
    assert sorted(p.body["name"] for p in policies) == ["ftp", "scm"]
    assert all(p.body["properties"]["allow"] is False for p in policies)


def test_application_insights_takes_only_entra_signed_telemetry():
    component = one("Microsoft.Insights/components").body
    assert component["properties"]["DisableLocalAuth"] is True
    assert accessor_path(component["properties"]["WorkspaceResourceId"]) == "workspace.id"
    assert (
        bicep_settings()["APPLICATIONINSIGHTS_AUTHENTICATION_STRING"]
        == "ClientId=${identity.properties.clientId};Authorization=AAD"
    )


# -- roles -----------------------------------------------------------------------------------------------------

def role_assignments():
    """(resource, role variable, role id) of every role assignment."""
    found = []
    for assignment in resources(ROLE_ASSIGNMENT):
        (definition,) = functions(assignment.body["properties"]["roleDefinitionId"], "subscription_resource_id")
        assert definition["resource_type"] == "Microsoft.Authorization/roleDefinitions"
        variable = definition["resource_name_1"]
        found.append((assignment, variable, resolve(assignment.file, variable)))
    return found


def test_every_role_assignment_is_named_by_scope_principal_and_role():
    assert len(role_assignments()) >= 8
    for assignment, variable, _ in role_assignments():
        (name,) = functions(assignment.body["name"], "guid")
        args = list(name.values())
        assert len(args) == 3, f"{assignment.symbol}: guid(scope, principal, role)"
        assert accessor_path(args[0]) == f"{accessor_path(assignment.body['scope'])}.id", assignment.symbol
        assert args[2] == variable
        assert assignment.body["properties"]["principalType"] in {"ServicePrincipal", "User"}


def test_every_role_id_is_a_documented_built_in_role_named_in_a_comment_above_it():
    for assignment, variable, role_id in role_assignments():
        assert role_id in BUILT_IN_ROLES, (f"{assignment.file.name}: {variable}={role_id} is not a documented "
                                           f"built-in role")
        lines = raw_lines(assignment.file)
        (line,) = [i for i, text in enumerate(lines) if text == f"var {variable} = '{role_id}'"]
        block = []
        for text in reversed(lines[:line]):
            if not text.startswith("//"):
                break
            block.insert(0, text)
        assert block and block[0].startswith(f"// {BUILT_IN_ROLES[role_id]}:"), \
            f"{assignment.file.name}: the comment above {variable} must start with '// {BUILT_IN_ROLES[role_id]}:'"
    every_id = {text for path in bicep_files() for text in strings(parse(path))
                if re.fullmatch(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", text)}
    assert not every_id & set(TOO_BROAD), f"too broad: {[TOO_BROAD[i] for i in every_id & set(TOO_BROAD)]}"


def holders():
    """{principal: {(role name, type of the scope)}} with the principal named as the template names it."""
    held = {}
    for assignment, _, role_id in role_assignments():
        symbol = accessor_path(assignment.body["scope"]).split("::")[-1]
        (scoped,) = [
            r for r in resources(existing=None) if r.file == assignment.file and r.symbol.split("__")[-1] == symbol
        ]
        principal = accessor_path(assignment.body["properties"]["principalId"])
        held.setdefault(principal, set()).add((BUILT_IN_ROLES[role_id], scoped.type.split("/")[-1]))
    return held


def test_each_principal_holds_exactly_the_roles_its_work_needs():
    # "principalId" is the app's identity in every module (checked below), the admin is a person, and the
    # system topic signs in to dead-letter undeliverable events.
    assert holders() == {
        "principalId": {
            ("Storage Blob Data Owner", "storageAccounts"),        # host, Durable blobs, package, collections
            ("Storage Queue Data Contributor", "storageAccounts"),  # Durable queues
            ("Storage Table Data Contributor", "storageAccounts"),  # Durable tables
            ("Monitoring Metrics Publisher", "components"),         # Entra-signed telemetry
            ("Search Index Data Reader", "searchServices"),         # queries, documents by key
            ("Reader", "searchServices"),                           # index definitions
            ("Cognitive Services OpenAI User", "accounts"),         # query embeddings
        },
        "adminPrincipalId": {("Storage Blob Data Contributor", "containers")},
        "systemTopic.identity.principalId": {("Storage Blob Data Contributor", "containers")},
    }
    for symbol in ("appRoles", "search", "openAi"):
        assert accessor_path(module_calls()[symbol]["params"]["principalId"]) == "identity.properties.principalId"
    assert module_calls()["appRoles"]["params"]["adminPrincipalId"] == "adminPrincipalId"


def test_scoped_roles_sit_on_the_right_containers():
    admin = next(a for a, _, _ in role_assignments() if a.symbol == "adminCollections")
    assert accessor_path(admin.body["scope"]) == "storage::blobService::collections"
    assert admin.condition == {
        "operator": {
            "type": "not",
            "operands": {
                "bool_value": {"function": {"type": "empty", "parameters": {"item_to_test": "adminPrincipalId"}}}
            },
        }
    }
    topic = next(a for a, _, _ in role_assignments() if a.symbol == "deadLetterWriter")
    assert accessor_path(topic.body["scope"]) == "storage::blobService::deadLetter"
    containers = {
        r.symbol: r.body["name"]
        for r in resources("Microsoft.Storage/storageAccounts/blobServices/containers", existing=True)
    }
    assert containers == {"storage__blobService__collections": "collectionsContainerName",
                          "storage__blobService__deadLetter": "deadLetterContainerName"}


def test_a_created_search_service_takes_only_entra_sign_in():
    created = one("Microsoft.Search/searchServices").body["properties"]
    assert created["disableLocalAuth"] is True
    assert created["semanticSearch"] == "semanticSearchPlan"
    assert bicep_settings()["AZURE_SEARCH_ENDPOINT"] == "searchEndpoint"
    assert variables(MAIN)["searchEndpoint"]["operator"]["operands"]["false_value"] == "https://${searchServiceName}.search.windows.net"



def test_the_semantic_ranker_plan_is_a_parameter_that_defaults_to_standard():
    # The free plan answers HTTP 402 after 1,000 semantic queries a month: one run of a 1,000-question golden
    # file with the 4 semantic setups of a two-vector-field index spends 4 x (1,000 + 1 warm-up) = 4,004.
    plans = ["disabled", "free", "standard"]
    for path in (MAIN, INFRA / "modules" / "search.bicep"):
        declared = parameters(path)["semanticSearchPlan"]
        assert declared["default"] == "standard", path
        assert next(d["argument"] for d in declared["decorators"] if d["type"] == "allowed") == plans, path
    assert module_calls()["search"]["params"]["semanticSearchPlan"] == "semanticSearchPlan"
    readme = (INFRA / "README.md").read_text(encoding="utf-8")
    assert "`semanticSearchPlan`" in readme and "4,004" in readme


# -- Event Grid ------------------------------------------------------------------------------------------------

def test_the_subscription_calls_golden_changed_on_blob_created_golden_jsonl_in_the_collections():
    subscription = one("Microsoft.EventGrid/systemTopics/eventSubscriptions")
    body = subscription.body["properties"]
    assert body["destination"]["endpointType"] == "AzureFunction"
    assert body["destination"]["properties"]["resourceId"] == "${functionApp.id}/functions/${goldenChangedFunctionName}"
    assert variables(subscription.file)["goldenChangedFunctionName"] == "golden_changed"
    assert body["destination"]["properties"]["maxEventsPerBatch"] == 1
    assert body["filter"]["includedEventTypes"] == ["Microsoft.Storage.BlobCreated"]
    assert body["filter"]["subjectEndsWith"].endswith("/golden.jsonl")
    assert body["filter"]["subjectBeginsWith"] == "/blobServices/default/containers/${collectionsContainerName}/blobs/"
    assert module_calls()["events"]["params"]["collectionsContainerName"] == "collectionsContainerName"
    assert body["retryPolicy"]["maxDeliveryAttempts"] >= 1 and body["retryPolicy"]["eventTimeToLiveInMinutes"] >= 60
    dead_letter = body["deadLetterWithResourceIdentity"]
    assert dead_letter["identity"] == {"type": "SystemAssigned"}
    assert dead_letter["deadLetterDestination"] == {
        "endpointType": "StorageBlob",
        "properties": {"resourceId": {"operator": {"type": "property_accessor",
                                                   "operands": {"operand_1": "storage", "operand_2": "id"}}},
                       "blobContainerName": "deadLetterContainerName"}}


def test_the_system_topic_watches_the_storage_account_and_signs_in_to_dead_letter():
    topic = one("Microsoft.EventGrid/systemTopics").body
    assert topic["properties"]["topicType"] == "Microsoft.Storage.StorageAccounts"
    assert accessor_path(topic["properties"]["source"]) == "storage.id"
    assert topic["identity"] == {"type": "SystemAssigned"}
    assert one("Microsoft.EventGrid/systemTopics/eventSubscriptions").body["parent"] == "systemTopic"


def test_the_subscription_waits_for_the_second_deployment():
    assert one("Microsoft.EventGrid/systemTopics/eventSubscriptions").condition == "deploySubscription"
    assert module_calls()["events"]["params"]["deploySubscription"] == "deployEventSubscription"
    assert parameters(MAIN)["deployEventSubscription"]["default"] is False
    values = json.loads((INFRA / "main.parameters.json").read_text(encoding="utf-8"))["parameters"]
    assert values.get("deployEventSubscription", {"value": False})["value"] is False


# -- sign-in for people ---------------------------------------------------------------------------------------

def test_people_sign_in_with_entra_while_keys_and_event_grid_still_reach_the_functions():
    config = one("Microsoft.Web/sites/config")
    assert config.body["name"] == "authsettingsV2" and config.body["parent"] == "app"
    properties = config.body["properties"]
    assert properties["platform"]["enabled"] is True
    # nothing required at the platform: a required sign-in would refuse function keys and Event Grid
    assert properties["globalValidation"] == {"requireAuthentication": False,
                                              "unauthenticatedClientAction": "AllowAnonymous"}
    entra = properties["identityProviders"]["azureActiveDirectory"]
    assert entra["enabled"] is True and entra["registration"]["clientId"] == "clientId"
    assert "clientSecretSettingName" not in entra["registration"]  # no secret: an ID-token sign-in
    # the token store on: the platform forwards the ID token the golden download checks (api/tokens.py),
    # kept where the platform keeps it: no SAS URL setting, which would be a secret
    assert properties["login"]["tokenStore"] == {"enabled": True}


def test_sign_in_is_configured_only_when_an_app_registration_is_given():
    call = module_calls()["signIn"]
    assert call["path"].name == "sign-in.bicep"
    assert parameters(MAIN)["signInClientId"]["default"] == ""
    assert "signInClientId" in json.dumps(call["condition"]) and call["params"]["clientId"] == "signInClientId"


# -- parameters and secrets ------------------------------------------------------------------------------------

def test_the_parameters_file_sets_only_parameters_main_declares_and_every_required_one():
    values = json.loads((INFRA / "main.parameters.json").read_text(encoding="utf-8"))["parameters"]
    declared = parameters(MAIN)
    assert set(values) <= set(declared)
    required = {name for name, declared_param in declared.items() if "default" not in declared_param}
    assert required <= set(values)


def test_no_secret_anywhere_in_the_bicep():
    for path in bicep_files():
        assert secret_problems(parse(path)) == [], path.name
        secure = [name for name, p in parameters(path).items() if any(d["type"] == "secure" for d in p["decorators"])]
        assert secure == [], f"{path.name}: a @secure() parameter means a secret is passed in"
    looks_secret = [
        name for name in bicep_settings() if re.search(r"KEY|SECRET|PASSWORD|TOKEN|SAS|CONNECTION_STRING", name, re.I)
    ]
    # Application Insights' connection string only names where to send once local auth is off (checked above).
    assert looks_secret == ["APPLICATIONINSIGHTS_CONNECTION_STRING"]


@pytest.mark.parametrize("value", [
    "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=abc==",
    "https://x.blob.core.windows.net/c?sv=2022-11-02&sig=AbC%2F",
    "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=a;SharedAccessKey=b",
    "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=https://x",
    "password=hunter2",
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr",
    "${storage.listKeys().keys[0].value}",
])
def test_the_secret_check_sees_written_out_credentials(value):
    assert secret_problems({"value": value})


def test_the_secret_check_sees_list_calls_and_passes_plain_names():
    assert secret_problems({"function": {"type": "list_func", "parameters": {"func_name": "listKeys"}}})
    assert secret_problems({"operator": {"type": "function_accessor",
                                         "operands": {"operand_1": "st", "func_name": "listSecrets"}}})
    assert secret_problems(["Microsoft.Storage/storageAccounts/blobServices/containers", "managedidentity",
                            "ClientId=${identity.properties.clientId};Authorization=AAD"]) == []
