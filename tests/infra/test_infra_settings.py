"""Every app setting the code reads is set in the Bicep, and the settings table (docs/azure.md) and
local.settings.example.json agree with the code. The settings are found by reading the code
(tests/app_env.py), never from a list kept by hand; the only hand-kept lists below are the
exceptions, each with its reason."""
from __future__ import annotations

import json
import re

import pytest

from app_env import ROOT, app_sources, settings_read
from bicep_model import MAIN, module_calls, resolve, resources, variables

# Read by the code, deliberately never set in Azure by the Bicep: the deployment holds no secret.
NOT_SET_IN_AZURE = {
    "EVALUATION_STORAGE_CONNECTION_STRING": "local/Azurite only: a connection string carries the account key; "
    "in Azure the app signs in with its identity at "
    "EVALUATION_STORAGE_ACCOUNT_URL",
    "AzureWebJobsStorage": "the host's connection string for Azurite when run locally; in Azure the identity-based "
    "AzureWebJobsStorage__* settings replace it",
    "WEBSITE_AUTH_ENABLED": "set by App Service itself while App Service authentication is on; the app reads it "
    "to know whether the X-MS-CLIENT-PRINCIPAL header came from the platform (api/principal.py)",
    "AZURE_SEARCH_API_KEY": "prefix of optional Azure AI Search API keys that a target spec names in api_key_env; "
    "the app signs in to search with its identity (Search Index Data Reader, Reader), so "
    "the Bicep sets no key; a team that must use one sets it itself",
}
# Settings read by prefix (AZURE_SEARCH_API_KEY_DOCS, ...): a name that starts with one is known.
PREFIXES = {"AZURE_SEARCH_API_KEY"}
# Set in the Bicep for the Functions host or the Azure SDK; the app's code need not read them.
PLATFORM = {
    "AzureWebJobsStorage__accountName": "the host and Durable Functions reach their storage as the identity",
    "AzureWebJobsStorage__credential": "'managedidentity': the host signs in instead of using a key",
    "AzureWebJobsStorage__clientId": "which of the app's identities the host signs in as (user-assigned)",
    "AZURE_CLIENT_ID": "DefaultAzureCredential in the app picks the user-assigned identity by it",
    "APPLICATIONINSIGHTS_CONNECTION_STRING": "the host sends telemetry there",
    "APPLICATIONINSIGHTS_AUTHENTICATION_STRING": "the host signs telemetry in as the identity (Entra ingestion)",
}
# In local.settings.json only, for Core Tools.
LOCAL_HOST = {
    "FUNCTIONS_WORKER_RUNTIME": "Core Tools needs it locally; Flex Consumption takes the runtime from "
                                "functionAppConfig and refuses this setting",
}


def bicep_settings() -> dict[str, object]:
    """The app settings object of main.bicep, which the function app module turns into siteConfig.appSettings."""
    return variables(MAIN)["appSettings"]


# -- the scan itself -------------------------------------------------------------------------------------------

def test_the_scan_finds_settings_read_directly_through_helpers_and_in_tables(tmp_path):
    (tmp_path / "host.json").write_text("{}")
    (tmp_path / "requirements.txt").write_text("")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "settings.py").write_text(
        "import os\n"
        "def text(env, name):\n    return env.get(name, '')\n"
        "A = os.environ.get('DIRECT_GET')\n"
        "B = os.getenv('lower-case-name')\n"
        "C = os.environ['SUBSCRIPT_READ']\n"
        "D = text(os.environ, 'THROUGH_HELPER')\n"
        "TABLE = {'field': 'IN_A_TABLE'}\n"
        "E = 'CHECKED_PRESENCE' in os.environ\n"
        "F = os.environ.get(f'BUILT_{A}')\n")
    (tmp_path / "triggers").mkdir()
    (tmp_path / "triggers" / "golden.py").write_text("import os\nX = os.environ['TRIGGER_SETTING']\n")
    (tmp_path / "function_app.py").write_text("import os\nZ = os.environ['TOP_LEVEL_SETTING']\n")
    for not_scanned in ("evaluation", "tests", "bench"):
        (tmp_path / not_scanned).mkdir()
        (tmp_path / not_scanned / "x.py").write_text("import os\nY = os.environ['NOT_AN_APP_SETTING']\n")

    found = settings_read(app_sources(tmp_path))

    assert set(found) == {"DIRECT_GET", "lower-case-name", "SUBSCRIPT_READ", "THROUGH_HELPER", "IN_A_TABLE",
                          "CHECKED_PRESENCE", "TRIGGER_SETTING", "TOP_LEVEL_SETTING"}
    assert found["TRIGGER_SETTING"] == [f"{tmp_path / 'triggers' / 'golden.py'}:2"]


def test_the_scan_reads_the_app_package_and_every_other_app_module():
    scanned = {path.relative_to(ROOT).as_posix() for path in app_sources()}
    assert {"app/settings.py", "function_app.py", "activities/planning.py"} <= scanned
    scanned = {path.split("/")[0] for path in scanned}
    assert not scanned & {"evaluation", "tests", "bench", "samples", "infra"}
    assert settings_read(), "the scan found no setting at all: it is reading the wrong files"


# -- the Bicep against the code --------------------------------------------------------------------------------

def test_every_setting_the_app_reads_is_set_in_the_bicep():
    code = settings_read()
    missing = {
        name: where for name, where in code.items() if name not in bicep_settings() and name not in NOT_SET_IN_AZURE
    }
    assert not missing, ("read by the app but not set in infra/main.bicep (add them to the appSettings object, "
                         f"or to NOT_SET_IN_AZURE with the reason): {missing}")


def test_every_bicep_setting_is_read_by_the_app_or_is_for_the_host():
    stale = set(bicep_settings()) - set(settings_read()) - set(PLATFORM)
    assert not stale, f"set in infra/main.bicep but read by nothing: {sorted(stale)}"


def test_settings_never_set_in_azure_stay_out_of_the_bicep():
    assert not set(NOT_SET_IN_AZURE) & set(bicep_settings())
    assert "EVALUATION_STORAGE_CONNECTION_STRING" in settings_read(), "the exception names a setting nobody reads"


def test_the_settings_object_is_what_the_function_app_gets():
    call = module_calls()["functionApp"]
    assert call["params"]["appSettings"] == "appSettings"
    (site,) = [r for r in resources("Microsoft.Web/sites") if r.file == call["path"]]
    loop = site.body["properties"]["siteConfig"]["appSettings"]
    assert loop["loop_type"]["detail"]["array_name"] == {"function": {"type": "items",
                                                                      "parameters": {"arg_1": "appSettings"}}}
    item = loop["loop_type"]["detail"]["item_name"]
    assert resolve(site.file, loop["config"]["name"]) == {"operator": {"type": "property_accessor",
                                                                       "operands": {"operand_1": item,
                                                                                    "operand_2": "key"}}}
    assert resolve(site.file, loop["config"]["value"]) == {"operator": {"type": "property_accessor",
                                                                        "operands": {"operand_1": item,
                                                                                     "operand_2": "value"}}}


# -- the settings table (docs/azure.md) and local.settings.example.json ----------------------------------------

def readme_setting_names(text: str) -> set[str] | None:
    """Names in backticks in the first column of the table whose first header is ``setting`` (docs/azure.md's)."""
    lines = text.splitlines()
    for number, line in enumerate(lines):
        cells = [cell.strip().lower() for cell in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and cells and cells[0] == "setting":
            names = set()
            for row in lines[number + 2:]:
                if not row.lstrip().startswith("|"):
                    break
                names |= {name.rstrip("*") for name in re.findall(r"`([^`]+)`", row.strip().strip("|").split("|")[0])}
            return names
    return None


def unknown(names: set[str], known: set[str]) -> list[str]:
    return sorted(name for name in names if name not in known and not any(name.startswith(p) for p in PREFIXES))


def readme_problems(names: set[str], code: set[str]) -> list[str]:
    problems = [
        f"{name} is read by the app but missing from the README settings table" for name in sorted(code - names)
    ]
    problems += [f"{name} is in the README settings table but nothing reads it" for name in
                 unknown(names, code | set(PLATFORM) | set(NOT_SET_IN_AZURE))]
    return problems


def local_settings_problems(values: dict[str, str], code: set[str]) -> list[str]:
    missing = code - set(values) - PREFIXES  # a prefix is an example's business, not a must
    problems = [f"{name} is read by the app but missing from local.settings.example.json" for name in sorted(missing)]
    problems += [f"{name} is in local.settings.example.json but nothing reads it" for name in
                 unknown(set(values), code | set(PLATFORM) | set(NOT_SET_IN_AZURE) | set(LOCAL_HOST))]
    return problems


def test_the_readme_settings_table_agrees_with_the_code():
    names = readme_setting_names((ROOT / "docs" / "azure.md").read_text(encoding="utf-8"))
    assert names is not None, "docs/azure.md (the settings table the README links to) has no settings table"
    assert readme_problems(names, set(settings_read())) == []


def test_local_settings_example_agrees_with_the_code():
    path = ROOT / "local.settings.example.json"
    if not path.exists():
        pytest.skip("local.settings.example.json is added by the Function App branch")
    values = json.loads(path.read_text(encoding="utf-8"))["Values"]
    assert local_settings_problems(values, set(settings_read())) == []
    assert not any(re.search(r"AccountKey=(?!Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq)", str(v))
                   for v in values.values()), "only Azurite's well-known development key may appear locally"


def test_the_readme_and_local_settings_checks_catch_a_missing_or_stale_setting():
    readme = ("| setting | meaning |\n|---|---|\n"
              "| `AzureWebJobsStorage__accountName` (Azure) / `AzureWebJobsStorage` (local) | host |\n"
              "| `EVALUATION_CONTAINER` | container |\n| `EVALUATION_GONE` | renamed |\n"
              "| `AZURE_SEARCH_API_KEY*` | keys by prefix |\n\nafter the table `NOT_A_ROW`\n")
    names = readme_setting_names(readme)
    assert names == {"AzureWebJobsStorage__accountName", "AzureWebJobsStorage", "EVALUATION_CONTAINER",
                     "EVALUATION_GONE",
                     "AZURE_SEARCH_API_KEY"}
    assert readme_problems(names, {"EVALUATION_CONTAINER", "EVALUATION_BY"}) == [
        "EVALUATION_BY is read by the app but missing from the README settings table",
        "EVALUATION_GONE is in the README settings table but nothing reads it"]
    assert readme_setting_names("no table here\n| a | b |\n|---|---|\n") is None
    assert local_settings_problems({"FUNCTIONS_WORKER_RUNTIME": "python", "EVALUATION_GONE": "x",
                                    "AZURE_SEARCH_API_KEY_DOCS": ""}, {"EVALUATION_BY", "AZURE_SEARCH_API_KEY"}) == [
        "EVALUATION_BY is read by the app but missing from local.settings.example.json",
        "EVALUATION_GONE is in local.settings.example.json but nothing reads it"]


# -- the function Event Grid calls -----------------------------------------------------------------------------

def test_golden_changed_is_a_function_of_the_app():
    triggers = sorted((ROOT / "triggers").glob("*.py")) if (ROOT / "triggers").is_dir() else []
    if not triggers:
        pytest.skip("triggers/ is added by the Function App branch")
    text = "\n".join(path.read_text(encoding="utf-8") for path in triggers)
    assert re.search(r"def golden_changed\(|function_name\(\s*(name\s*=\s*)?[\"']golden_changed[\"']", text), \
        "the Event Grid subscription (infra/modules/events.bicep) calls a function named golden_changed"
