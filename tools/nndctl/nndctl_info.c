/* SPDX-License-Identifier: Apache-2.0 */
/* nndctl_info.c: `nndctl info [--json]`, what the daemon at the socket offers: its version,
 * one line per device with that device's own type, feature level and speed, its
 * capabilities per operand type and the driver partitions it holds now (from the admin
 * status), and the capabilities the daemon reports. The JSON form holds the same data for scripts.
 */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnd/nnd_wire.h"
#include "tools/conformance/conformance.h"
#include "tools/nndctl/nndctl.h"
#include "tools/nndctl/nndctl_units.h"

static void add_perf(cJSON *o, const char *key, const Nnd__PerformanceInfo *p) {
    if (!p) return;
    cJSON *e = cJSON_AddObjectToObject(o, key);
    cJSON_AddNumberToObject(e, "exec_time", tool_float_value(p->exec_time));
    cJSON_AddNumberToObject(e, "power_usage", tool_float_value(p->power_usage));
}

static cJSON *devices_json(const Nnd__DevicesReply *list) {
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < list->n_devices; i++) {
        const Nnd__DeviceInfo *d = list->devices[i];
        char type[32];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", d->name);
        cJSON_AddStringToObject(e, "type", tool_device_type_name(type, sizeof type, d->type));
        cJSON_AddStringToObject(e, "version", d->version ? d->version : "");
        cJSON_AddNumberToObject(e, "feature_level", tool_feature_level(d->feature_level));
        cJSON_AddNumberToObject(e, "feature_level_code", (double)d->feature_level);
        cJSON_AddNumberToObject(e, "exec_time", tool_float_value(d->exec_time));
        cJSON_AddBoolToObject(e, "reference_only", d->reference_only);
        cJSON_AddItemToArray(a, e);
    }
    return a;
}

static cJSON *capabilities_json(const Nnd__Capabilities *caps) {
    cJSON *o = cJSON_CreateObject();
    add_perf(o, "relaxed_float32_to_float16_scalar", caps->relaxed_float32_to_float16_scalar);
    add_perf(o, "relaxed_float32_to_float16_tensor", caps->relaxed_float32_to_float16_tensor);
    add_perf(o, "if", caps->if_performance);
    add_perf(o, "while", caps->while_performance);
    cJSON_AddBoolToObject(o, "dma_buf_supported", caps->dma_buf_supported);
    cJSON *ops = cJSON_AddArrayToObject(o, "operand_performance");
    for (size_t i = 0; i < caps->n_operand_performance; i++) {
        const Nnd__OperandPerformance *p = caps->operand_performance[i];
        const char *name = schema_hal_type_name(p->type);
        char label[32];
        snprintf(label, sizeof label, "type %d", p->type);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "type", name ? name : label);
        add_perf(e, "performance", p->info);
        cJSON_AddItemToArray(ops, e);
    }
    return o;
}

/* Each device's own capabilities and driver partitions, from the daemon's status when its
 * admin bus answers (GetCapabilities speaks for the daemon as a whole). */
static void add_device_capabilities(const nndctl_opts *o, cJSON *devices) {
    char err[256];
    char *text =
        devices ? nndctl_admin_request(o, "{\"cmd\":\"status\"}", 2000, err, sizeof err) : NULL;
    cJSON *status = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *s;
    cJSON *d;
    cJSON_ArrayForEach(d, devices) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(d, "name");
        cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(status, "devices")) {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(s, "name");
            if (!cJSON_IsString(n) || !cJSON_IsString(name) ||
                strcmp(n->valuestring, name->valuestring))
                continue;
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(s, "capabilities");
            if (c) cJSON_AddItemToObject(d, "capabilities", cJSON_Duplicate(c, true));
            const cJSON *p = cJSON_GetObjectItemCaseSensitive(s, "partitions");
            if (cJSON_IsNumber(p)) cJSON_AddNumberToObject(d, "partitions", p->valuedouble);
            const cJSON *held = cJSON_GetObjectItemCaseSensitive(s, "held_partitions");
            if (held) cJSON_AddItemToObject(d, "held_partitions", cJSON_Duplicate(held, true));
        }
    }
    cJSON_Delete(status);
}

/* What the daemon says about itself, as one JSON object; NULL with err set when it cannot
 * be asked. */
static cJSON *gather(const nndctl_opts *o, char *err, size_t errlen) {
    nnd_client *c = nnd_client_connect(o->socket_path, "nndctl", err, errlen);
    if (!c) return NULL;
    char version[256];
    Nnd__Capabilities *caps = NULL;
    cJSON *j = NULL;
    if (nnd_client_version_string(c, version, sizeof version, err, errlen) != 0 ||
        nnd_client_get_capabilities(c, &caps, err, errlen) != 0)
        goto out;
    j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "version", version);
    cJSON_AddStringToObject(j, "daemon_version", nnd_client_daemon_version(c));
    /* From the Hello reply: the socket is all it takes, wherever the daemon's state is. */
    unsigned ops = nnd_client_daemon_operation_types(c);
    if (ops) cJSON_AddNumberToObject(j, "supported_operation_types", ops);
    Nnd__DevicesReply *devices = NULL;
    char derr[512];
    if (nnd_client_get_devices(c, &devices, derr, sizeof derr) == 0) {
        cJSON_AddItemToObject(j, "devices", devices_json(devices));
        nnd__devices_reply__free_unpacked(devices, NULL);
    } else {
        cJSON_AddStringToObject(j, "devices_error", derr);
    }
    cJSON_AddItemToObject(j, "capabilities", capabilities_json(caps));
    add_device_capabilities(o, cJSON_GetObjectItemCaseSensitive(j, "devices"));
out:
    if (caps) nnd__capabilities__free_unpacked(caps, NULL);
    nnd_client_close(c);
    return j;
}

static double num(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *str(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "?";
}

static void print_devices(const cJSON *devices) {
    int width = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, devices) {
        int n = (int)strlen(str(d, "name"));
        if (n > width) width = n;
    }
    printf("devices      %d\n", cJSON_GetArraySize(devices));
    cJSON_ArrayForEach(d, devices) {
        printf("  %-*s  %-11s  feature level %g, %s, exec time %g%s\n", width, str(d, "name"),
               str(d, "type"), num(d, "feature_level"), str(d, "version"), num(d, "exec_time"),
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "reference_only"))
                   ? ", reference kernels only"
                   : "");
        nndctl_print_caps(cJSON_GetObjectItemCaseSensitive(d, "capabilities"), 4);
        nndctl_print_held_partitions(cJSON_GetObjectItemCaseSensitive(d, "held_partitions"), 4);
    }
}

/* One line when every figure is the same (as a CPU's are), else one line per entry. */
static void print_performance(const cJSON *caps) {
    static const char *const named[][2] = {
        {"relaxed_float32_to_float16_scalar", "relaxed float16 scalar"},
        {"relaxed_float32_to_float16_tensor", "relaxed float16 tensor"},
        {"if", "IF"},
        {"while", "WHILE"}};
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(caps, "operand_performance"), *e;
    const cJSON *first = NULL;
    bool same = true;
    for (size_t i = 0; i < 4; i++) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(caps, named[i][0]);
        if (!p) continue;
        if (!first) first = p;
        same &= num(p, "exec_time") == num(first, "exec_time") &&
                num(p, "power_usage") == num(first, "power_usage");
    }
    cJSON_ArrayForEach(e, ops) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "performance");
        if (!first) first = p;
        same &= num(p, "exec_time") == num(first, "exec_time") &&
                num(p, "power_usage") == num(first, "power_usage");
    }
    if (!first) return;
    if (same) {
        printf("performance  exec time %g, power usage %g, for all %d operand types, relaxed "
               "float16, IF and WHILE\n",
               num(first, "exec_time"), num(first, "power_usage"), cJSON_GetArraySize(ops));
        return;
    }
    printf("performance  (exec time, power usage)\n");
    for (size_t i = 0; i < 4; i++) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(caps, named[i][0]);
        if (p) printf("  %-30s %g, %g\n", named[i][1], num(p, "exec_time"), num(p, "power_usage"));
    }
    cJSON_ArrayForEach(e, ops) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "performance");
        printf("  %-30s %g, %g\n", str(e, "type"), num(p, "exec_time"), num(p, "power_usage"));
    }
}

static void print_summary(const cJSON *j) {
    printf("daemon       %s\n", str(j, "version"));
    if (cJSON_GetObjectItemCaseSensitive(j, "supported_operation_types"))
        printf("operations   %g operation types supported\n", num(j, "supported_operation_types"));
    else
        printf("operations   unknown (the daemon does not say)\n");
    const cJSON *devices = cJSON_GetObjectItemCaseSensitive(j, "devices");
    if (devices)
        print_devices(devices);
    else
        printf("devices      unknown (%s)\n", str(j, "devices_error"));
    const cJSON *caps = cJSON_GetObjectItemCaseSensitive(j, "capabilities");
    print_performance(caps);
    printf("dma-buf      %s\n",
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(caps, "dma_buf_supported")) ? "yes"
                                                                                     : "no");
}

int nndctl_info(const nndctl_opts *o, int argc, char **argv) {
    bool json = argc == 2 && !strcmp(argv[1], "--json");
    if (argc > 1 && !json) {
        fprintf(stderr, "usage: nndctl info [--json]\n");
        return 2;
    }
    char err[512];
    cJSON *j = gather(o, err, sizeof err);
    if (!j) {
        fprintf(stderr, "nndctl: %s\n", err);
        return 1;
    }
    if (json) {
        char *text = cJSON_Print(j);
        if (text) puts(text);
        cJSON_free(text);
    } else {
        print_summary(j);
    }
    cJSON_Delete(j);
    return 0;
}
