"""Pairs with (or verifies against) a HAP bridge by direct IP with the real controller,
aiohomekit 4.0.1: for tests that need a paired bridge (Tests/web/test_web.py's unpairing).

  python hap_pair.py pair   PORT PAIRING-ID SETUP-CODE FILE   # pair-setup; saves the pairing to FILE
  python hap_pair.py verify PORT PAIRING-ID FILE              # pair-verify + /accessories with FILE's pairing

Exit 0 on success; 3 when the bridge refuses the controller (e.g. no longer paired); 1 otherwise.
"""
import asyncio
import json
import sys

from aiohomekit.characteristic_cache import CharacteristicCacheMemory
from aiohomekit.controller.ip.controller import IpController
from aiohomekit.controller.ip.discovery import IpDiscovery
from aiohomekit.exceptions import HomeKitException
from aiohomekit.model.categories import Categories
from aiohomekit.model.feature_flags import FeatureFlags
from aiohomekit.model.status_flags import StatusFlags
from aiohomekit.zeroconf import HomeKitService


async def main(argv):
    mode, port, pairing_id = argv[0], int(argv[1]), argv[2]
    controller = IpController(char_cache=CharacteristicCacheMemory(), zeroconf_instance=None)
    if mode == "pair":
        code, path = argv[3], argv[4]
        svc = HomeKitService(
            name="Hearth", id=pairing_id, model="Hearth", feature_flags=FeatureFlags(0), status_flags=StatusFlags.UNPAIRED,
            config_num=1, state_num=1, category=Categories.BRIDGE, protocol_version="1.1", type="_hap._tcp.local.",
            address="127.0.0.1", addresses=["127.0.0.1"], port=port)
        finish = await IpDiscovery(controller, svc).async_start_pairing("web-test")
        pairing = await finish(code)
        with open(path, "w") as f:
            json.dump(dict(pairing._pairing_data), f)
    else:
        with open(argv[3]) as f:
            pairing = controller.load_pairing("web-test", json.load(f))
    try:
        accessories = await asyncio.wait_for(pairing.list_accessories_and_characteristics(), 120)
        print(f"{mode}: {len(accessories)} accessories", flush=True)
        result = 0
    except HomeKitException as e:
        print(f"refused: {type(e).__name__}: {e}", flush=True)
        result = 3
    try:
        await pairing.close()
    except HomeKitException:
        pass  # closing re-raises the refused connection's error
    return result


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
