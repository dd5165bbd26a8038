"""Where nodes run: the deploy info file (`ge.experiment.data_flow_deploy_info_path`) and the
resource config (`ge.resourceConfigPath` / `RESOURCE_CONFIG_PATH`) that declares the logical
devices. docs/deployment.md describes both formats and every rule.

    info = load_deploy_info("deploy.json")        # every rule of the file itself
    check_deploy_devices(info, load_resource_config("numa_config.json"))   # devices exist
    info = load_checked_deploy_info("deploy.json", "numa_config.json")   # both: what place-nodes takes
"""
from dfir.frontend.deploy.deploy_info import (DeployInfo, InvokePlacement, Placement, check_deploy_devices,
                                              load_checked_deploy_info, load_deploy_info)
from dfir.frontend.deploy.devices import HOST, DeviceId, parse_device_list, spell_device_list
from dfir.frontend.deploy.resource_config import ResourceConfig, Server, load_resource_config

__all__ = ["HOST", "DeployInfo", "DeviceId", "InvokePlacement", "Placement", "ResourceConfig", "Server",
           "check_deploy_devices", "load_checked_deploy_info", "load_deploy_info", "load_resource_config", "parse_device_list",
           "spell_device_list"]
