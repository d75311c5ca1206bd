/* SPDX-License-Identifier: Apache-2.0 */
/* android/NeuralNetworks.h: the path NNAPI programs include, as on Android. The API
 * itself is <nnd/NeuralNetworks.h>; this header only forwards to it, so both paths give
 * the same declarations. `pkg-config --cflags nnd` makes this path reachable, both from a
 * build tree and from an installed prefix. */
#ifndef NND_ANDROID_NEURAL_NETWORKS_H
#define NND_ANDROID_NEURAL_NETWORKS_H

#include <nnd/NeuralNetworks.h>

#endif
