{{ config(materialized='table', meta={'owner': 'analytics'}) }}
select count(*) as orders, sum(amount) as amount from {{ source('shop', 'orders') }}
