export function acceptEmptyJsonBody(app) {
    const parseJson = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, function parseJsonOrNothing(request, body, done) {
        const text = body.toString();
        if (text === '')
            return done(null, undefined);
        return parseJson(request, text, done);
    });
}
//# sourceMappingURL=empty-json-body.js.map