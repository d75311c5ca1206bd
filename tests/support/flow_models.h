/* SPDX-License-Identifier: Apache-2.0 */
/* flow_models: wire models with control flow (IF, WHILE over referenced subgraphs) for the
 * tests. Every part is malloc'd on its own, so nnd__model__free_unpacked(m, NULL) frees a
 * model; a builder that runs out of memory aborts (tests only).
 *
 * - flow_counter_model(): y = WHILE (i < n) { i = i + step } starting from i = x, over
 *   TENSOR_FLOAT32 [1]: inputs x and n, output y, step a constant. With n = +inf the
 *   loop never ends; with n - x = N it runs N / step iterations (two tiny operations
 *   each).
 * - flow_if_model(): y = IF c THEN x + x ELSE x - x, x and y TENSOR_FLOAT32 [n] (n = 0:
 *   unknown, then the branches' shapes come at execution); inputs c (TENSOR_BOOL8 [1])
 *   and x.
 * - flow_growing_model(): y = WHILE (size(v) < n) { v = concat(v, v[0:1] + 1) } starting
 *   from v = x [1]: a carried value of unknown length that grows by one element each
 *   iteration, so y is [n] with y[k] = x + k. Inputs x (TENSOR_FLOAT32 [1]) and n
 *   (TENSOR_INT32 [1]); output y (TENSOR_FLOAT32, dimension unknown).
 *
 * The generic builder underneath, for models of a test's own:
 * - flow_model_new() makes an empty model; flow_graph() its main graph (index -1) or a new
 *   referenced subgraph (returned index in *ref); flow_operand() appends an operand to a
 *   graph; flow_constant() one of CONSTANT_COPY with its bytes in operand_values;
 *   flow_reference() a SUBGRAPH operand naming referenced subgraph r; flow_operation()
 *   an operation; flow_io() a graph's input and output lists.
 */
#ifndef TST_SUPPORT_FLOW_MODELS_H
#define TST_SUPPORT_FLOW_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "nnd.pb-c.h"

Nnd__Model *flow_counter_model(float step);
Nnd__Model *flow_if_model(uint32_t n);
Nnd__Model *flow_growing_model(void);

Nnd__Model *flow_model_new(void);
Nnd__Subgraph *flow_graph(Nnd__Model *m, uint32_t *ref);
uint32_t flow_operand(Nnd__Subgraph *g, int32_t type, uint32_t rank, const uint32_t *dims,
                      Nnd__OperandLifeTime lifetime);
uint32_t flow_constant(Nnd__Model *m, Nnd__Subgraph *g, int32_t type, uint32_t rank,
                       const uint32_t *dims, const void *bytes, size_t len);
uint32_t flow_reference(Nnd__Subgraph *g, uint32_t r);
void flow_operation(Nnd__Subgraph *g, int32_t type, uint32_t n_in, const uint32_t *in,
                    uint32_t n_out, const uint32_t *out);
void flow_io(Nnd__Subgraph *g, uint32_t n_in, const uint32_t *in, uint32_t n_out,
             const uint32_t *out);

#endif
