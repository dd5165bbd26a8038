"""Where nodes run: the deploy info file (`ge.experiment.data_flow_deploy_info_path`) and the
logical devices of the resource config (`ge.resourceConfigPath` / `RESOURCE_CONFIG_PATH`).

The loaders read only what placement needs today (one device per node); each reports a defect as
a GeError naming the file and the JSON path.
"""
from dfir.deploy.deploy_info import DeployInfo, Placement, load_deploy_info
from dfir.deploy.devices import DeviceId, parse_device_id
from dfir.deploy.resource_config import ResourceDevices, load_resource_devices

__all__ = ["DeployInfo", "DeviceId", "Placement", "ResourceDevices", "load_deploy_info",
           "load_resource_devices", "parse_device_id"]
