"""Lists what Accel sees: the backends the loader found, every device with its capabilities, and the topology.

    python list_devices.py

Which backends load is decided by the ACCEL_* environment variables when the process first uses accel (for
example ACCEL_BACKENDS=host, or ACCEL_BACKENDS=sim ACCEL_SIM_PROFILE=h100-sxm-8 for eight simulated H100s).
Exits 0 after printing the report (also when no device is visible: the loader report says why), 1 when an
Accel call fails.
"""

import sys

import accel


def gib(nbytes):
    return f"{nbytes / (1 << 30):.1f} GiB"


def print_loader_report():
    # accel.loader_report(): one dict per backend manifest the loader considered, with what became of it.
    print("Loader report:")
    for entry in accel.loader_report():
        line = f"  {entry['backend']:<8} {entry['state']:<8} devices={entry['device_count']}"
        if entry["negotiated_abi_version"] is not None:
            line += " abi=" + ".".join(map(str, entry["negotiated_abi_version"]))
        if entry["reason"]:
            line += f"  ({entry['reason']})"
        elif entry["state"] != "loaded":
            line += f"  ({entry['status_name']})"
        print(line)
        print(f"           {entry['library'] or entry['manifest']}")


def print_device(device):
    caps = device.capabilities  # every registered capability key, by name
    free, total = device.memory_info()
    print(f"Device {device.index}: {device.name}")
    print(f"  backend {device.backend}, kind {device.kind}, vendor {device.vendor or '-'}"
          f"{', simulated' if device.simulated else ''}")
    print(f"  stable id {device.stable_id} (accel.device('{device.stable_id}') finds it again)")
    print(f"  memory {gib(free)} free of {gib(total)}; {caps['compute_units']} compute units; "
          f"max work-group {caps['max_work_group_size']} {tuple(caps['max_work_group_dims'])}; "
          f"local memory {caps['local_memory_size']} bytes")
    print(f"  features: {', '.join(device.features) or '-'}")
    # The kernel formats this device executes: what accel.load_module can pick for it.
    print(f"  kernel formats: {', '.join(device.kernel_formats) or '-'}")
    # Device.topology: where the device sits (PCI, NUMA, nearest NIC) and the domains it belongs to.
    topo = device.topology
    domains = ", ".join(f"{d['level']}={d['id']}" for d in topo["domains"]) or "-"
    print(f"  topology: pci {topo['pci_bus_id'] or '-'}, numa node {topo['numa_node']}, "
          f"cpus {topo['local_cpus'] or '-'} ({topo['local_cpu_count']}), nearest nic {topo['nearest_nic']}")
    print(f"  domains: {domains}")
    print(f"  DLPack device: {device.dlpack_device}; physical device '{device.physical_device.name}' "
          f"reached through {len(device.physical_device.devices)} access path(s)")


def print_links(devices):
    # Device.link(peer): how two devices are connected (class, link count, bandwidth, peer access), shown as a
    # matrix like `nvidia-smi topo -m`, then what each kind of link in it means.
    if len(devices) < 2:
        return
    kinds = {}
    rows = []
    for d in devices:
        cells = []
        for peer in devices:
            if peer == d:
                cells.append("X")
                continue
            link = d.link(peer)
            cell = link["link_class"] + (f"x{link['link_count']}" if link["link_count"] else "")
            cells.append(cell)
            kinds[cell] = link
        rows.append(cells)
    width = max(len(cell) for cells in rows for cell in cells) + 2
    print("Links (row -> column):")
    print("      " + "".join(f"{peer.index:>{width}}" for peer in devices))
    for d, cells in zip(devices, rows):
        print(f"  {d.index:>4}" + "".join(f"{cell:>{width}}" for cell in cells))
    for cell, link in sorted(kinds.items()):
        bandwidth = f"{link['bandwidth'] / 1e9:.0f} GB/s one way" if link["bandwidth"] else "bandwidth unknown"
        print(f"  {cell}: {bandwidth}, peer access {'yes' if link['peer_access'] else 'no'}"
              f"{', fabric ' + link['fabric'] if link['fabric'] else ''}")


def main():
    version = accel.version()
    print(f"Accel {'.'.join(map(str, version['library_version']))} ({version['build']}); "
          f"kernel formats Accel knows: {', '.join(accel.kernel_formats())}")
    print_loader_report()
    devices = accel.devices()
    print(f"{len(devices)} device(s) on {len(accel.physical_devices())} physical device(s)")
    for device in devices:
        print_device(device)
    print_links(devices)
    nics = accel.nics()
    print(f"NICs: {', '.join(n['name'] + ' (' + n['kind'] + ')' for n in nics) or '-'}")
    if not devices:
        print("No device is visible: the loader report above says why.")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except accel.AccelError as e:
        print(f"list_devices: {e.status_name}: {e}", file=sys.stderr)
        sys.exit(1)
