export function sendJsonText(reply, json) {
    return reply.type('application/json; charset=utf-8').send(json);
}
//# sourceMappingURL=json-text.js.map