/* SPDX-License-Identifier: Apache-2.0 */
/* nnd_extension.c: libnnd's HAL-level GetSupportedExtensions. See include/nnd/nnd_wire.h. */
#include <errno.h>
#include <stdio.h>

#include "nnd/nnd_wire.h"

int nnd_client_get_supported_extensions(nnd_client *c, Nnd__SupportedExtensionsReply **out,
                                        char *err, size_t errlen) {
    Nnd__GetSupportedExtensions call = NND__GET_SUPPORTED_EXTENSIONS__INIT;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_GET_SUPPORTED_EXTENSIONS;
    req.get_supported_extensions = &call;
    *out = NULL;
    Nnd__Reply *r = NULL;
    int rc = nnd_client_call(c, &req, NULL, 0, &r, NULL, NULL, err, errlen);
    if (rc < 0) return rc;
    int status = r->status;
    if (status != NND__ERROR_STATUS__NONE) {
        if (err && errlen)
            snprintf(err, errlen, "%s: %s", nnd_status_name(status),
                     r->message && *r->message ? r->message : "(no message)");
    } else if (r->result_case != NND__REPLY__RESULT_SUPPORTED_EXTENSIONS) {
        if (err && errlen) snprintf(err, errlen, "the daemon answered with the wrong result");
        status = -EBADMSG;
    } else {
        /* protobuf-c allocates every sub-message on its own, so it can outlive its parent. */
        *out = r->supported_extensions;
        r->supported_extensions = NULL;
        r->result_case = NND__REPLY__RESULT__NOT_SET;
    }
    nnd__reply__free_unpacked(r, NULL);
    return status;
}
