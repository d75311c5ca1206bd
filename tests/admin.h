/* admin: one admin-bus command (nanomsg REQ/REP, JSON) to a test daemon, for tests that
 * read its status. Returns the parsed reply (free with cJSON_Delete), or NULL when the
 * daemon did not answer within 10 s. */
#ifndef NND_TEST_ADMIN_H
#define NND_TEST_ADMIN_H

#include <cjson/cJSON.h>

#include "harness.h"

cJSON *nnd_test_admin(const nnd_test_daemon *d, const char *cmd);

#endif
