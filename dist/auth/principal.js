export function requirePrincipal(principal) {
    if (!principal)
        throw new Error('route is missing its authentication hook');
    return principal;
}
//# sourceMappingURL=principal.js.map