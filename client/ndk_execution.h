/* ndk_execution: what bursts need of an ANeuralNetworksExecution.
 *
 * Contract: ndk_execution_compilation() is the compilation an execution was made from.
 * ndk_execution_compute_burst() is ANeuralNetworksExecution_compute with the request
 * sent through daemon burst b (the same checks, results and completion). */
#ifndef NND_NDK_EXECUTION_H
#define NND_NDK_EXECUTION_H

#include "ndk_shared.h"

NDK_HIDDEN const ANeuralNetworksCompilation *
ndk_execution_compilation(const ANeuralNetworksExecution *e);
/* ANeuralNetworksExecution_compute, through a daemon burst (nnd.h, "bursts"). */
NDK_HIDDEN int ndk_execution_compute_burst(ANeuralNetworksExecution *e, nnd_burst *b);

#endif
