"""Runs the CHIP Python controller (home-assistant-chip-core) against Hearth's test responder in
`im` mode: PASE, then Interaction Model traffic over the PASE session (no commissioning):
  1. ReadAttribute of Basic Information on endpoint 0;
  2. a wildcard-endpoint read of the Descriptor (the aggregator's PartsList lists the bridged endpoints);
  3. reads of a bridged contact sensor and thermometer (clusters served from Hearth's catalogue);
  4. OnOff Toggle on the bridged light (endpoint 2) and a read back;
  5. a subscription to OnOff: the priming value, then a report after another Toggle.

Usage: im_controller.py HOST PORT PASSCODE STORAGE_DIR
Prints one line per step and 'IM OK' at the end; exits 1 with 'IM FAILED <reason>' otherwise.
"""
import asyncio
import sys


async def main() -> int:
    host, port, passcode, storage = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    from chip_controller import start
    import chip.clusters as Clusters

    controller, stop = start(storage, fabric_id=1)
    node = 1
    try:
        await asyncio.wait_for(controller.EstablishPASESessionIP(host, passcode, node, port), timeout=20)
        print("PASE OK", flush=True)

        BI = Clusters.BasicInformation
        r = await controller.ReadAttribute(node, [(0, BI)])
        info = r[0][BI]
        vendor, product = info[BI.Attributes.VendorName], info[BI.Attributes.ProductName]
        print(f"READ BasicInformation VendorName={vendor!r} ProductName={product!r} VendorID={info[BI.Attributes.VendorID]}", flush=True)
        assert vendor == "Hearth" and info[BI.Attributes.VendorID] == 0xFFF1, info

        D = Clusters.Descriptor
        r = await controller.ReadAttribute(node, [D])
        endpoints = sorted(r.keys())
        parts = {ep: list(r[ep][D][D.Attributes.PartsList]) for ep in endpoints}
        types = {ep: [t.deviceType for t in r[ep][D][D.Attributes.DeviceTypeList]] for ep in endpoints}
        print(f"READ Descriptor endpoints={endpoints} parts={parts} deviceTypes={types}", flush=True)
        assert endpoints == [0, 1, 2, 3, 4] and parts[1] == [2, 3, 4] and 0x000E in types[1], parts

        B, T = Clusters.BooleanState, Clusters.TemperatureMeasurement
        r = await controller.ReadAttribute(node, [(3, B.Attributes.StateValue), (4, T.Attributes.MeasuredValue)])
        contact, temperature = r[3][B][B.Attributes.StateValue], r[4][T][T.Attributes.MeasuredValue]
        print(f"READ BooleanState={contact} MeasuredValue={temperature}", flush=True)
        assert contact is True and temperature == 2150

        O = Clusters.OnOff
        async def on_off():
            return (await controller.ReadAttribute(node, [(2, O.Attributes.OnOff)]))[2][O][O.Attributes.OnOff]
        before = await on_off()
        await controller.SendCommand(node, 2, O.Commands.Toggle())
        after = await on_off()
        print(f"INVOKE Toggle before={before} after={after}", flush=True)
        assert before is False and after is True

        loop = asyncio.get_running_loop()
        reports: asyncio.Queue = asyncio.Queue()
        sub = await controller.ReadAttribute(node, [(2, O.Attributes.OnOff)], reportInterval=(0, 10))
        primed = sub.GetAttributes()[2][O][O.Attributes.OnOff]
        print(f"SUBSCRIBED id={sub.subscriptionId} primed={primed}", flush=True)
        sub.SetAttributeUpdateCallback(
            lambda path, transaction: loop.call_soon_threadsafe(reports.put_nowait, transaction.GetAttribute(path)))
        await controller.SendCommand(node, 2, O.Commands.Toggle())
        value = await asyncio.wait_for(reports.get(), timeout=10)
        print(f"REPORT OnOff={value}", flush=True)
        assert primed is True and value is False
        sub.Shutdown()
        print("IM OK", flush=True)
        return 0
    except Exception as error:  # ChipStackError, AssertionError, timeouts
        print(f"IM FAILED {error!r}", flush=True)
        return 1
    finally:
        stop()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
