export function setNextLink(request, reply, baseUrl, nextCursor) {
    if (nextCursor === null)
        return;
    const url = new URL(request.url, `${baseUrl}/`);
    url.searchParams.set('cursor', nextCursor);
    reply.header('link', `<${baseUrl}${url.pathname}${url.search}>; rel="next"`);
}
//# sourceMappingURL=pagination.js.map