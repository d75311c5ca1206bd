/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_attribute.h: the extension attributes of feature level 8
 * (ANeuralNetworksCompilation_addExtensionAttribute and
 * ANeuralNetworksExecution_addExtensionAttribute): vendor hints a compilation or an
 * execution made for exactly one device may carry, each named by an extension the
 * daemon offers and a code within it, at most once per object. The NNAPI lets a driver
 * ignore any attribute; no nnd device or extension reads one, so libnnd checks and counts
 * them (the same refusals as Android's runtime) and sends none to the daemon. */
#ifndef CLI_NDK_ATTRIBUTE_H
#define CLI_NDK_ATTRIBUTE_H

#include "client/ndk_shared.h"

#endif
