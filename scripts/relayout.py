#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The scripted relayout of issue 38: engine/ in layers (contracts, ops_common, ops,
plugins, backends/xnnpack, backends/drivers, core), tests/ grouped by what they test, the
module unit tests among them. Moves files with git mv and rewrites every path that names a
moved file (includes, CMake lists, scripts, docs). Kept for the record and for rebasing a
branch made before the move: run it again on such a branch (it skips what is already moved).
Usage: scripts/relayout.py [SOURCE_DIR]"""
import os
import re
import subprocess
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")

OPS_COMMON = """affine_quant.c affine_quant.h boxes.c boxes.h broadcast.c broadcast.h clamp.h
conv_walk.c conv_walk.h fixedpoint.c fixedpoint.h float16.h fused_activation.c
fused_activation.h image_geometry.c image_geometry.h index_sort.c index_sort.h
kernel_errors.c kernel_errors.h operand.c operand.h qlstm_math.c qlstm_math.h quant_table.c
quant_table.h realvalue.c realvalue.h recurrent.c recurrent.h signature.c signature.h
tensor_copy.c tensor_copy.h type_bridge.c type_bridge.h""".split()
ENGINE = {
    "base": "footprint.c footprint.h",
    "core": """model.c prepare.c arena_plan.c arena_plan.h execute.c flow.h flow_check.c
               flow_plan.c flow_run.c step_blobs.c fp16_region.c fp16_region.h
               requant_fold.c requant_fold.h internal.h""",
    "backends/xnnpack": """xnn.c xnn_alloc.c xnn_alloc.h xnn_batch_matmul.c xnn_conv.c
               xnn_eltwise.c xnn_fp16.c xnn_norm.c xnn_qs8.c xnn_step.h xnn_transformer.c
               cpu_crowd.c cpu_crowd.h""",
    "backends/drivers": "driver.c driver.h driver_step.c",
    "plugins": """extension.c extension.h extension_op.c extension_op.h extension_plugin.h
               fault_guard.c fault_guard.h refusals.c refusals.h""",
}
TESTS = {
    "support": """harness.c harness.h harness_group.c subprocess.c subprocess.h wire.c wire.h
               timing.h observe.c observe.h flow_models.c flow_models.h mobilenet.c mobilenet.h
               mobilenet_nnapi.c mobilenet_nnapi.h qos_models.h cache_model.h""",
    "engine": """test_arena.c test_validation.c test_validation_ops.c test_int8.c
               test_control_flow.c test_quant_rounding.c test_requant_fold.c
               test_kernel_bounds.c test_fastpath.c test_fastpath_transformer.c
               test_xnn_alloc.c""",
    "daemon": """test_session.c test_hostile.c test_daemon.c test_flow_daemon.c test_cache.c
               test_cache_sighting.c test_cache_save_limit.c cache_client.c hold_client.c
               test_buffer.c test_extensions.c ext_test_plugin.c test_qos.c qos_flood.c
               test_quota.c test_reload.c test_faults.c test_load.c test_guess.c
               test_isolation.c attack.c attack.h test_trust.c test_drivers.c
               drv_test_driver.c drv_models.h test_driver_memory.c drv_mem_driver.c
               test_refused_ops.c""",
    "client": """test_client.c test_client_threads.c test_shared_session.c test_client_logs.c
               test_burst.c test_burst_channel.c test_memory_pools.c test_memory_registry.c
               test_memory_domains.c memory_common.c memory_common.h test_record.c
               record_client.c record_client.h libnnd_exports.sh""",
    "ndk": """test_ndk_burst.c test_ndk_conformance.c test_ndk_devices.c test_ndk_execution.c
               test_ndk_memory.c test_ndk_model.c test_ndk_priority.c test_ndk_process.c
               test_ndk_rules.c test_ndk_threads.c test_ndk_timing.c test_ndk_validation.c
               ndk_fixture.c ndk_fixture.h ndk_load.c ndk_load.h test_large_model.c
               test_mobilenet.c test_nnapi_dlopen.c""",
    "tools": """test_nndctl.c test_nndctl_ops.c test_nndctl_bisect.c test_conformance_lib.c
               test_op_drift.c conformance_floor.sh conformance_local_floor.sh
               cli_options_test.sh""",
}
# The unit tests that lived beside their modules.
MODULE_TESTS = {"sched/sched_test.c": "tests/daemon/sched_test.c",
                "storage/storage_test.c": "tests/daemon/storage_test.c",
                "schema/schema_test.c": "tests/shared/schema_test.c",
                "tests/test_frame.c": "tests/shared/test_frame.c"}

moves = {}
for name in OPS_COMMON:
    moves["engine/ops/" + name] = "engine/ops_common/" + name
for folder, names in ENGINE.items():
    for name in names.split():
        moves["engine/" + name] = f"engine/{folder}/{name}"
test_moves = {}
for folder, names in TESTS.items():
    for name in names.split():
        test_moves[name] = f"{folder}/{name}"
        moves["tests/" + name] = f"tests/{folder}/{name}"
moves.update(MODULE_TESTS)


def git(*args):
    return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True,
                          check=True).stdout


for old, new in sorted(moves.items()):
    if os.path.exists(os.path.join(root, old)):
        os.makedirs(os.path.dirname(os.path.join(root, new)), exist_ok=True)
        git("mv", old, new)

# Every tracked text file: paths from the source root that name a moved file.
path_re = re.compile(r"(?<![\w.-])(?<!\w/)(" + "|".join(re.escape(o) for o in
                     sorted(moves, key=len, reverse=True)) + r")(?![\w.-])")
# Inside engine/, comments name files relative to it ("ops/registry.c", "xnn.c" stays).
rel = {o[len("engine/"):]: n[len("engine/"):] for o, n in moves.items()
       if o.startswith("engine/ops/")}
rel_re = re.compile(r"(?<![\w/.-])(" + "|".join(re.escape(o) for o in rel) + r")(?![\w.-])")
for f in git("ls-files").split():
    if f.endswith((".xz", ".gz", ".png", ".bin", ".onnx", ".tflite")) or "/regress/" in f:
        continue
    p = os.path.join(root, f)
    if not os.path.isfile(p) or os.path.islink(p):
        continue
    try:
        with open(p) as fh:
            text = fh.read()
    except UnicodeDecodeError:
        continue
    new = path_re.sub(lambda m: moves[m.group(1)], text)
    new = rel_re.sub(lambda m: rel[m.group(1)], new)
    if f == "tests/CMakeLists.txt":
        names = sorted(test_moves, key=len, reverse=True)
        new = re.sub(r"(?:(?<=[\s(])|(?<=CURRENT_SOURCE_DIR}/))(" + "|".join(re.escape(n) for n in names) + r")(?![\w.-])",
                     lambda m: test_moves[m.group(1)], new)
        new = new.replace("test_ndk_${part}.c", "ndk/test_ndk_${part}.c")
    if new != text:
        with open(p, "w") as fh:
            fh.write(new)
