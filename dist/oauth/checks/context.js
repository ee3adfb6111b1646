/** The parameter's value when it was sent exactly once as text; undefined when absent or empty. */
export function stringParam(params, name) {
    const value = params[name];
    return typeof value === 'string' && value.length > 0 ? value : undefined;
}
//# sourceMappingURL=context.js.map