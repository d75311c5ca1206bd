/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_attribute.c: see ndk_attribute.h. The two NDK calls live here too, after the checks
 * Android's runtime makes in the same order (a NULL argument, the device list, the state,
 * the extension, a repeat). */
#include "client/ndk_attribute.h"

#include <stdlib.h>

#include "client/ndk_execution.h"

/* Adds one attribute after the caller's NULL and state checks: BAD_DATA when the
 * extension is not one the daemon offers or the attribute is already there, the session's
 * code when the daemon cannot be asked, OUT_OF_MEMORY; NO_ERROR otherwise. data (length
 * bytes) is not kept: no device reads it. */
static int ndk_attributes_add(ndk_attributes *a, const char *extension, uint16_t code) {
    int32_t token;
    int rc = ndk_extension_type(extension, code, &token);
    if (rc != ANEURALNETWORKS_NO_ERROR) {
        ndk_debug("addExtensionAttribute: extension \"%s\" is not one the daemon offers",
                  extension);
        return rc;
    }
    for (uint32_t i = 0; i < a->n; i++)
        if (a->tokens[i] == token) {
            ndk_debug("addExtensionAttribute: attribute %u of \"%s\" added twice", code, extension);
            return ANEURALNETWORKS_BAD_DATA;
        }
    int32_t *grown = realloc(a->tokens, (a->n + 1) * sizeof *grown);
    if (!grown) return ANEURALNETWORKS_OUT_OF_MEMORY;
    grown[a->n++] = token;
    a->tokens = grown;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksCompilation_addExtensionAttribute(ANeuralNetworksCompilation *compilation,
                                                     const char *extensionName,
                                                     uint16_t attributeCodeWithinExtension,
                                                     const void *data, size_t length) {
    if (!compilation || !extensionName || (!data && length)) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (compilation->finished) return ANEURALNETWORKS_BAD_STATE;
    if (!compilation->explicit_devices || compilation->n_devices != 1)
        return ANEURALNETWORKS_BAD_DATA;
    return ndk_attributes_add(&compilation->attributes, extensionName,
                              attributeCodeWithinExtension);
}

int ANeuralNetworksExecution_addExtensionAttribute(ANeuralNetworksExecution *execution,
                                                   const char *extensionName,
                                                   uint16_t attributeCodeWithinExtension,
                                                   const void *data, size_t length) {
    if (!execution || !extensionName || (!data && length)) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!ndk_execution_single_device(execution)) return ANEURALNETWORKS_BAD_DATA;
    if (atomic_load(&execution->state) != NDK_EXEC_PREPARATION) return ANEURALNETWORKS_BAD_STATE;
    return ndk_attributes_add(&execution->attributes, extensionName, attributeCodeWithinExtension);
}
